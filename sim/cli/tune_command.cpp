// headroom tune SCENARIO --knob NAME --range LO:HI: the most aggressive value of a knob that never
// runs out of memory on the workload and its stressed variants, evaluated on every core. Writes
// frontier.csv, tune.json (with the deployment the report names), the scenario as resolved and
// report.html into the output folder.
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/cli/output_folder.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/progress.hpp"
#include "sim/report/chart_images.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/report_folder.hpp"
#include "sim/report/tune_report_page.hpp"
#include "sim/scenario/deployment_facts.hpp"
#include "sim/scenario/resolved_scenario.hpp"
#include "sim/scenario/tune.hpp"

namespace headroom::cli {

namespace {

struct TuneArgs {
  std::string scenario;
  std::string knob;
  std::string range;
  int points = 16;
  std::string stress;
  std::string out_dir;
  bool json = false;
  unsigned threads = 0;
  bool png = false;
  bool svg = false;
  std::optional<double> resolution;  // --resolution (TuneBisection)
  std::optional<double> margin;      // --margin
};

std::pair<double, double> parse_range(const std::string& text) {
  const std::size_t colon = text.find(':');
  auto number = [&](const std::string& s) {
    try {
      std::size_t used = 0;
      double v = std::stod(s, &used);
      if (used == s.size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
    throw InputError(fmt::format("--range: '{}' is not LO:HI with two numbers, e.g. 0.80:0.95", text));
  };
  if (colon == std::string::npos) throw InputError(fmt::format("--range: '{}' is not LO:HI, e.g. 0.80:0.95", text));
  return {number(text.substr(0, colon)), number(text.substr(colon + 1))};
}

nlohmann::json or_null(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::string margin_rule(const scenario::TuneResult& r) {
  return r.knob.fraction ? "the larger of 0.01 and the cliff's spread over the variants"
                         : "the cliff's spread over the variants";
}

nlohmann::json tune_json(const scenario::Scenario& sc, double lo, double hi, const scenario::TuneResult& r) {
  nlohmann::json j;
  j["scenario"] = sc.name;
  j.update(scenario::deployment_facts_json(sc));
  j["knob"] = r.knob.name;
  j["unit"] = r.knob.unit;
  j["range"] = {lo, hi};
  j["higher_is_aggressive"] = r.knob.higher_is_aggressive;
  j["best"] = or_null(r.best);
  j["first_failing"] = or_null(r.first_failing);
  j["monotone"] = r.monotone;
  j["step"] = r.step;
  j["variants"] = nlohmann::json::array();
  for (const auto& v : r.variants) j["variants"].push_back(v.name());
  j["threads"] = r.threads;
  j["simulations"] = r.simulations;
  j["wall_s"] = r.wall_s;
  // The answer: each variant's cliff to the resolution, the margin kept below the worst one and the
  // flag to paste.
  const scenario::TuneAnswer& a = r.answer;
  nlohmann::json cliffs = nlohmann::json::array();
  for (const auto& c : a.cliffs)
    cliffs.push_back({{"variant", c.variant}, {"safe", or_null(c.safe)}, {"failing", or_null(c.failing)},
                      {"probes", c.probes}});
  j["answer"] = {{"resolution", a.resolution}, {"cliffs", cliffs}, {"safe", or_null(a.safe)},
                 {"cliff", or_null(a.cliff)}, {"spread", a.spread}, {"margin", a.margin},
                 {"margin_rule", a.margin_given ? "given (--margin)" : margin_rule(r)}, {"value", or_null(a.value)},
                 {"flag", a.flag.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.flag)}};
  j["frontier"] = nlohmann::json::array();
  for (const auto& p : r.frontier)
    j["frontier"].push_back({{"value", p.value}, {"started", p.started}, {"kv_tokens", p.kv_tokens},
                             {"oom", p.failed}, {"failed_variant", p.failed_variant}, {"failure", p.failure},
                             {"ttft_p99_s", or_null(p.ttft_p99_s)}, {"tpot_p99_s", or_null(p.tpot_p99_s)},
                             {"preemptions", p.preemptions}});
  return j;
}

// A latency with no sample: an empty CSV cell.
std::string csv_seconds(const std::optional<double>& v) { return v ? fmt::format("{:.6f}", *v) : std::string(); }

// A CSV field: quoted, with inner quotes doubled.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void tune(const TuneArgs& a) {
  namespace fs = std::filesystem;
  scenario::Scenario sc = scenario::load_scenario(a.scenario);
  auto [lo, hi] = parse_range(a.range);
  std::vector<scenario::StressVariant> variants =
      a.stress.empty() ? scenario::default_stress(sc) : scenario::parse_stress(a.stress);
  fs::path out = a.out_dir.empty() ? scenario::default_output_folder(sc) / "tune" : fs::path(a.out_dir);
  scenario::knob_info(sc, a.knob);  // a bad knob fails before the output folder is made
  scenario::check_bisection({.resolution = a.resolution, .margin = a.margin});
  if (a.png) report::require_chart_renderer("png");
  if (a.svg) report::require_chart_renderer("svg");
  const std::string resolved = scenario::resolved_scenario_yaml(sc);
  const auto lock = open_output_folder(out);

  scenario::TuneResult r = [&] {
    // The grid's and then the bisection's simulations on the terminal; cleared before any output.
    Progress progress = Progress::on_stderr("tune", 0);
    return scenario::tune(sc, a.knob, lo, hi, a.points, variants, a.threads,
                          {.resolution = a.resolution, .margin = a.margin}, &progress);
  }();
  nlohmann::json j = tune_json(sc, lo, hi, r);
  // Every output's text is ready before the first file is written, report.html included: drawn from
  // these texts, as `headroom report DIR` would draw it from the saved files.
  const std::string tune_text = j.dump(2) + "\n";
  std::string frontier = "value,started,kv_tokens,oom,failed_variant,ttft_p99_s,tpot_p99_s,preemptions,failure\n";
  for (const auto& p : r.frontier)
    frontier += fmt::format("{},{},{},{},{},{},{},{},{}\n", p.value, p.started ? 1 : 0, p.kv_tokens,
                            p.failed ? 1 : 0, p.failed_variant, csv_seconds(p.ttft_p99_s), csv_seconds(p.tpot_p99_s),
                            p.preemptions, quoted(p.failure));
  const nlohmann::json page = report::tune_report_page(report::OutputFolder(
      out, {{"frontier.csv", frontier}, {"scenario.resolved.yaml", resolved}, {"tune.json", tune_text}}));
  StagedOutputs outputs;
  outputs.add(out / "frontier.csv", frontier);
  outputs.add(out / "scenario.resolved.yaml", resolved);
  outputs.add(out / "tune.json", tune_text);
  outputs.add(out / "report.html", report::html_report(page));
  outputs.commit();
  const std::vector<fs::path> images = report::render_report_images(out / "report.html", page, a.png, a.svg);
  if (a.json) {
    fmt::print("{}\n", j.dump(2));
    return;
  }
  std::vector<std::string> names;
  for (const auto& v : r.variants) names.push_back(v.name());
  fmt::print("{}: tune {} over [{}, {}], {} points × {} variants ({}), {} simulations on {} threads in {:.1f} s\n",
             sc.name, r.knob.name, lo, hi, r.frontier.size(), r.variants.size(), fmt::join(names, ", "),
             r.simulations, r.threads, r.wall_s);
  fmt::print("  {:>12} {:>10} {:>6} {:>10}  {}\n", "value", "KV tokens", "OOM", "TTFT p99", "first failure");
  for (const auto& p : r.frontier)
    fmt::print("  {:>12.6g} {:>10} {:>6} {:>10}  {}\n", p.value, p.kv_tokens, p.failed ? "yes" : "no",
               p.ttft_p99_s ? fmt::format("{:.3f}s", *p.ttft_p99_s) : std::string("-"),
               p.failed ? p.failed_variant + ": " + p.failure : "");
  if (r.best)
    fmt::print("  best         {} = {:.6g} ({} value that never ran out of memory{})\n", r.knob.name, *r.best,
               r.knob.higher_is_aggressive ? "the largest" : "the smallest",
               r.first_failing ? fmt::format("; {:.6g} fails", *r.first_failing) : "");
  else
    fmt::print("  best         none: every value ran out of memory or failed to start; widen the range\n");
  if (!r.monotone) fmt::print("  note         the frontier is not monotone: a value beyond the first failure passed\n");
  const scenario::TuneAnswer& ans = r.answer;
  std::vector<std::string> cliffs;
  for (const auto& c : ans.cliffs)
    cliffs.push_back(fmt::format("{} {}", c.variant,
                                 !c.safe ? std::string("fails throughout")
                                 : c.failing ? fmt::format("{:.6g}", *c.safe)
                                             : fmt::format("{:.6g} (no failure in the range)", *c.safe)));
  fmt::print("  cliff        safe to {:g}, by variant: {}; spread {:.6g}\n", ans.resolution, fmt::join(cliffs, ", "),
             ans.spread);
  if (ans.value)
    fmt::print("  use          {} ({} = {:.6g}: {:.6g} {} the worst variant's safe value {:.6g}; margin {})\n",
               ans.flag.empty() ? fmt::format("{} = {:.6g}", r.knob.name, *ans.value) : ans.flag, r.knob.name,
               *ans.value, ans.margin, r.knob.higher_is_aggressive ? "below" : "above", *ans.safe,
               ans.margin_given ? "given with --margin" : margin_rule(r));
  else
    fmt::print("  use          none: no value is safe on every variant; widen the range\n");
  fmt::print("  outputs      {}/frontier.csv, tune.json, scenario.resolved.yaml, report.html\n", out.string());
  if (!images.empty()) fmt::print("  charts       {} files in {}\n", images.size(), out.string());
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune", "Find the most aggressive value of a knob that never runs out of memory");
  cmd->add_option("scenario", args->scenario, "Scenario YAML (see docs/scenario.md)")->required();
  cmd->add_option("--knob", args->knob,
                  "gpu_memory_utilization, mem_fraction_static, mem_fraction, or policy.fraction, policy.mem_fraction, "
                  "policy.k, policy.margin_mib, policy.floor_mib, policy.canary_mib")
      ->required();
  cmd->add_option("--range", args->range, "LO:HI, e.g. 0.80:0.95")->required();
  cmd->add_option("--points", args->points, "Grid points over the range (default 16)");
  cmd->add_option("--stress", args->stress,
                  "Variants: base, rate:F, burst:N, seed:N, comma-separated, or none (default: base,rate:1.25,burst:2 "
                  "and seed:1 for synthetic workloads)");
  cmd->add_option("-o,--output", args->out_dir, "Output folder (default: out/<scenario name>/tune)");
  cmd->add_option("--resolution", args->resolution,
                  "Bisect each variant's cliff to this (default 0.005 for a fraction, an eighth of the grid step otherwise)");
  cmd->add_option("--margin", args->margin,
                  "Keep this far from the worst variant's cliff (default: the larger of 0.01 for a fraction and the cliff's "
                  "spread over the variants)");
  cmd->add_flag("--json", args->json, "Print tune.json instead of the table");
  cmd->add_option("-j,--threads", args->threads, "Simulations at once (default: every core)");
  cmd->add_flag("--png", args->png, "Also render the report's charts to PNG files in the output folder (headless Chromium)");
  cmd->add_flag("--svg", args->svg, "Also render the report's charts to SVG files in the output folder (headless Chromium)");
  cmd->callback([args] { tune(*args); });
}

}  // namespace headroom::cli
