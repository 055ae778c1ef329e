// headroom tune SCENARIO --knob NAME --range LO:HI: the most aggressive value of a knob that never
// runs out of memory on the workload and its stressed variants, evaluated on every core; with
// --with KNOB=V1,V2,..., at each value of a second knob, and the pair to use. Writes frontier.csv,
// tune.json (with the deployment the report names), the scenario as resolved and report.html into
// the output folder.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/cli/fail_on.hpp"
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
  std::optional<std::string> fail_on;  // --fail-on (fail_on.hpp): held by the answer
  std::string with;                    // --with KNOB=V1,V2,...: tune jointly (scenario::tune_jointly)
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
nlohmann::json or_null(const std::optional<bool>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

// A value of the knob: a whole number for a whole-number knob (256, not 256.0).
nlohmann::json knob_number(const scenario::KnobInfo& k, double v) {
  return k.whole ? nlohmann::json(static_cast<std::int64_t>(v)) : nlohmann::json(v);
}
nlohmann::json knob_or_null(const scenario::KnobInfo& k, const std::optional<double>& v) {
  return v ? knob_number(k, *v) : nlohmann::json(nullptr);
}

// A verdict cell of frontier.csv: 1, 0, or empty when undecided.
std::string csv_bool(const std::optional<bool>& v) { return v ? (*v ? "1" : "0") : ""; }

// The --fail-on conditions that hold for tune's answer: oom, no value is safe from running out of
// memory; slo, no value meets the SLO as well; overload, the answer's base run is overloaded.
std::vector<std::string> tune_conditions_held(const FailOn& f, const scenario::TuneResult& r) {
  const scenario::TuneAnswer& a = r.answer;
  std::vector<std::string> held;
  if (f.oom && !a.memory_value) held.push_back("oom (no value in the range is safe on every variant)");
  if (f.slo && (!a.value || a.slo_met != true))
    held.push_back(fmt::format("slo ({})", a.memory_value ? a.slo_note : "no value in the range is safe on every variant"));
  if (f.overload && a.value && a.overloaded == true)
    held.push_back(fmt::format("overload (the answer {:.6g} is overloaded on the base variant)", *a.value));
  return held;
}

std::string margin_rule(const scenario::TuneResult& r) {
  return r.knob.fraction ? "the larger of 0.01 and the cliff's spread over the variants"
                         : "the cliff's spread over the variants";
}

nlohmann::json answer_json(const scenario::TuneResult& r) {
  const scenario::TuneAnswer& a = r.answer;
  nlohmann::json cliffs = nlohmann::json::array();
  for (const auto& c : a.cliffs)
    cliffs.push_back({{"variant", c.variant}, {"safe", knob_or_null(r.knob, c.safe)}, {"failing", knob_or_null(r.knob, c.failing)},
                      {"probes", c.probes}});
  return {{"resolution", a.resolution}, {"cliffs", cliffs}, {"safe", knob_or_null(r.knob, a.safe)},
          {"cliff", knob_or_null(r.knob, a.cliff)}, {"spread", a.spread}, {"margin", a.margin},
          {"margin_rule", a.margin_given ? "given (--margin)" : margin_rule(r)}, {"value", knob_or_null(r.knob, a.value)},
          {"flag", a.flag.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.flag)},
          {"memory_value", knob_or_null(r.knob, a.memory_value)}, {"checked", a.checked}, {"slo_met", or_null(a.slo_met)},
          {"overloaded", or_null(a.overloaded)},
          {"kv_tokens", a.kv_tokens ? nlohmann::json(*a.kv_tokens) : nlohmann::json(nullptr)},
          {"slo_note", a.slo_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.slo_note)}};
}

nlohmann::json frontier_json(const scenario::TuneResult& r) {
  nlohmann::json f = nlohmann::json::array();
  for (const auto& p : r.frontier)
    f.push_back({{"value", knob_number(r.knob, p.value)}, {"started", p.started}, {"kv_tokens", p.kv_tokens}, {"oom", p.failed},
                 {"failed_variant", p.failed_variant}, {"failure", p.failure}, {"ttft_p99_s", or_null(p.ttft_p99_s)},
                 {"tpot_p99_s", or_null(p.tpot_p99_s)}, {"preemptions", p.preemptions},
                 {"slo_met", or_null(p.slo_met)}, {"overloaded", or_null(p.overloaded)}});
  return f;
}

nlohmann::json tune_json(const scenario::Scenario& sc, double lo, double hi, const scenario::TuneResult& r) {
  nlohmann::json j;
  j["scenario"] = sc.name;
  j.update(scenario::deployment_facts_json(sc));
  j["knob"] = r.knob.name;
  j["unit"] = r.knob.unit;
  j["range"] = {knob_number(r.knob, lo), knob_number(r.knob, hi)};
  j["higher_is_aggressive"] = r.knob.higher_is_aggressive;
  j["best"] = knob_or_null(r.knob, r.best);
  j["first_failing"] = knob_or_null(r.knob, r.first_failing);
  j["monotone"] = r.monotone;
  j["step"] = r.step;
  j["variants"] = nlohmann::json::array();
  for (const auto& v : r.variants) j["variants"].push_back(v.name());
  j["threads"] = r.threads;
  j["simulations"] = r.simulations;
  j["wall_s"] = r.wall_s;
  // The answer: each variant's cliff to the resolution, the margin kept below the worst one and the
  // flag to paste.
  j["answer"] = answer_json(r);
  j["slo"] = report::slo_json(sc.slo);
  j["frontier"] = frontier_json(r);
  return j;
}

const char* const kJointRule =
    "the most KV tokens of the pairs whose answer is safe on every variant, not overloaded on the base variant and "
    "meeting the SLO (when the scenario sets one); ties go to the more aggressive second value";

// Jointly: the top level is the chosen pair's slice (the first slice when none qualifies), so that
// readers of a one-knob tune.json read it as before; `with` and `joint` hold the whole 2-D search.
nlohmann::json joint_json(const scenario::Scenario& sc, double lo, double hi, const scenario::JointTuneResult& jr) {
  const scenario::JointSlice& shown = jr.slices[jr.chosen.value_or(0)];
  nlohmann::json j = tune_json(sc, lo, hi, shown.result);
  j["simulations"] = jr.simulations;
  j["wall_s"] = jr.wall_s;
  nlohmann::json values = nlohmann::json::array();
  for (const auto& s : jr.slices) values.push_back(knob_number(jr.with, s.with_value));
  j["with"] = {{"knob", jr.with.name}, {"unit", jr.with.unit}, {"values", values},
               {"higher_is_aggressive", jr.with.higher_is_aggressive}};
  j["joint"] = nlohmann::json::array();
  for (const auto& s : jr.slices) {
    const std::string flag = scenario::engine_flag(sc, jr.with.name, s.with_value);
    j["joint"].push_back({{"with_value", knob_number(jr.with, s.with_value)},
                          {"with_flag", flag.empty() ? nlohmann::json(nullptr) : nlohmann::json(flag)},
                          {"best", knob_or_null(s.result.knob, s.result.best)},
                          {"first_failing", knob_or_null(s.result.knob, s.result.first_failing)},
                          {"monotone", s.result.monotone}, {"step", s.result.step},
                          {"simulations", s.result.simulations}, {"answer", answer_json(s.result)},
                          {"frontier", frontier_json(s.result)}});
  }
  nlohmann::json& a = j["answer"];
  a["with_value"] = jr.chosen ? knob_number(jr.with, shown.with_value) : nlohmann::json(nullptr);
  a["flags"] = jr.flags;
  a["choice_rule"] = kJointRule;
  if (!jr.chosen) {
    a["value"] = nullptr;
    a["flag"] = nullptr;
    a["kv_tokens"] = nullptr;
  }
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

const char* const kFrontierHeader =
    "value,started,kv_tokens,oom,failed_variant,ttft_p99_s,tpot_p99_s,preemptions,slo_met,overloaded,failure\n";

// frontier.csv's rows of one tune; jointly, each row starts with the second knob's value.
std::string frontier_rows(const scenario::TuneResult& r, const std::string& with_cell) {
  std::string rows;
  for (const auto& p : r.frontier)
    rows += fmt::format("{}{},{},{},{},{},{},{},{},{},{},{}\n", with_cell, p.value, p.started ? 1 : 0, p.kv_tokens,
                        p.failed ? 1 : 0, p.failed_variant, csv_seconds(p.ttft_p99_s), csv_seconds(p.tpot_p99_s),
                        p.preemptions, csv_bool(p.slo_met), csv_bool(p.overloaded), quoted(p.failure));
  return rows;
}

std::string yes_no(const std::optional<bool>& v) { return v ? (*v ? "yes" : "no") : "-"; }

// The grid's table, the best grid value, each variant's cliff.
void print_grid(const scenario::Scenario& sc, const scenario::TuneResult& r) {
  const bool slo = sc.slo.any();
  fmt::print("  {:>12} {:>10} {:>6} {:>10}{}  {}\n", "value", "KV tokens", "OOM", "TTFT p99",
             slo ? fmt::format(" {:>8} {:>10}", "SLO met", "overloaded") : fmt::format(" {:>10}", "overloaded"),
             "first failure");
  for (const auto& p : r.frontier)
    fmt::print("  {:>12.6g} {:>10} {:>6} {:>10}{}  {}\n", p.value, p.kv_tokens, p.failed ? "yes" : "no",
               p.ttft_p99_s ? fmt::format("{:.3f}s", *p.ttft_p99_s) : std::string("-"),
               slo ? fmt::format(" {:>8} {:>10}", yes_no(p.slo_met), yes_no(p.overloaded))
                   : fmt::format(" {:>10}", yes_no(p.overloaded)),
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
}

// The answer of one tune: the flag to paste and why.
std::string answer_text(const scenario::TuneResult& r) {
  const scenario::TuneAnswer& ans = r.answer;
  const std::string paste = ans.flag.empty() && ans.value ? fmt::format("{} = {:.6g}", r.knob.name, *ans.value) : ans.flag;
  if (ans.value && ans.value == ans.memory_value)
    return fmt::format("{} ({} = {:.6g}: {:.6g} {} the worst variant's safe value {:.6g}; margin {}{})", paste,
                       r.knob.name, *ans.value, ans.margin, r.knob.higher_is_aggressive ? "below" : "above", *ans.safe,
                       ans.margin_given ? "given with --margin" : margin_rule(r),
                       ans.slo_met == true ? "; it meets the SLO on the base variant" : "");
  if (ans.value) return fmt::format("{} (to meet the SLO: {})", paste, ans.slo_note);
  if (ans.memory_value) return fmt::format("none: {}", ans.slo_note);
  return "none: no value is safe on every variant; widen the range";
}

void tune(const TuneArgs& a) {
  namespace fs = std::filesystem;
  scenario::Scenario sc = scenario::load_scenario(a.scenario);
  auto [lo, hi] = parse_range(a.range);
  std::vector<scenario::StressVariant> variants =
      a.stress.empty() ? scenario::default_stress(sc) : scenario::parse_stress(a.stress);
  fs::path out = a.out_dir.empty() ? scenario::default_output_folder(sc) / "tune" : fs::path(a.out_dir);
  const scenario::TuneBisection bisection{.resolution = a.resolution, .margin = a.margin};
  // Bad input fails before the output folder is made: the knob, the range, every grid value.
  scenario::check_tune_inputs(sc, a.knob, lo, hi, a.points, bisection);
  std::optional<std::pair<std::string, std::vector<double>>> with;
  if (!a.with.empty()) {
    with = scenario::parse_with(sc, a.knob, a.with);
    for (double w : with->second) {
      scenario::Scenario s = sc;
      scenario::set_knob(s, with->first, w);
      scenario::check_tune_inputs(s, a.knob, lo, hi, a.points, bisection);
    }
  }
  const FailOn fail_on = a.fail_on ? parse_fail_on(*a.fail_on, sc.slo.any()) : FailOn{};
  if (a.png) report::require_chart_renderer("png");
  if (a.svg) report::require_chart_renderer("svg");
  const std::string resolved = scenario::resolved_scenario_yaml(sc);
  const auto lock = open_output_folder(out);

  std::optional<scenario::JointTuneResult> joint;
  scenario::TuneResult single;
  {
    // The grid's and then the bisection's simulations on the terminal; cleared before any output.
    Progress progress = Progress::on_stderr("tune", 0);
    if (with)
      joint = scenario::tune_jointly(sc, a.knob, lo, hi, a.points, variants, with->first, with->second, a.threads,
                                     bisection, &progress);
    else
      single = scenario::tune(sc, a.knob, lo, hi, a.points, variants, a.threads, bisection, fail_on.overload, &progress);
  }
  // The answer --fail-on judges, and the slice the top level of tune.json and the report show.
  const scenario::TuneResult& r = joint ? joint->slices[joint->chosen.value_or(0)].result : single;
  nlohmann::json j = joint ? joint_json(sc, lo, hi, *joint) : tune_json(sc, lo, hi, r);
  // Every output's text is ready before the first file is written, and report.html's page: drawn from
  // these texts, as `headroom report DIR` would draw it from the saved files, and streamed to its file.
  const std::string tune_text = j.dump(2) + "\n";
  std::string frontier;
  if (joint) {
    frontier = joint->with.name + "," + kFrontierHeader;
    for (const auto& slice : joint->slices) frontier += frontier_rows(slice.result, fmt::format("{},", slice.with_value));
  } else {
    frontier = kFrontierHeader + frontier_rows(r, "");
  }
  const nlohmann::json page = report::tune_report_page(report::OutputFolder(
      out, {{"frontier.csv", frontier}, {"scenario.resolved.yaml", resolved}, {"tune.json", tune_text}}));
  StagedOutputs outputs;
  outputs.add(out / "frontier.csv", frontier);
  outputs.add(out / "scenario.resolved.yaml", resolved);
  outputs.add(out / "tune.json", tune_text);
  outputs.add(out / "report.html", [&](std::ostream& o) { report::write_html_report(o, page); });
  outputs.commit();
  const std::vector<fs::path> images = report::render_report_images(out / "report.html", page, a.png, a.svg);
  // Jointly, no qualifying pair is no answer.
  scenario::TuneResult judged = r;
  if (joint && !joint->chosen) judged.answer.value = std::nullopt;
  const std::vector<std::string> held = tune_conditions_held(fail_on, judged);
  if (a.json) {
    fmt::print("{}\n", j.dump(2));
    std::fflush(stdout);
    fail_if_held(held);
    return;
  }
  std::vector<std::string> names;
  for (const auto& v : r.variants) names.push_back(v.name());
  if (!joint) {
    fmt::print("{}: tune {} over [{}, {}], {} points × {} variants ({}), {} simulations on {} threads in {:.1f} s\n",
               sc.name, r.knob.name, lo, hi, r.frontier.size(), r.variants.size(), fmt::join(names, ", "),
               r.simulations, r.threads, r.wall_s);
    print_grid(sc, r);
    fmt::print("  use          {}\n", answer_text(r));
  } else {
    std::vector<std::string> with_values;
    for (const auto& slice : joint->slices) with_values.push_back(fmt::format("{:.6g}", slice.with_value));
    fmt::print("{}: tune {} over [{}, {}] at {} = {}, {} points × {} variants ({}) each, {} simulations on {} threads in "
               "{:.1f} s\n",
               sc.name, r.knob.name, lo, hi, joint->with.name, fmt::join(with_values, ", "), r.frontier.size(),
               r.variants.size(), fmt::join(names, ", "), joint->simulations, r.threads, joint->wall_s);
    for (const auto& slice : joint->slices) {
      fmt::print("  at {} = {:.6g}\n", joint->with.name, slice.with_value);
      print_grid(sc, slice.result);
      const scenario::TuneAnswer& ans = slice.result.answer;
      fmt::print("  answer       {}; KV tokens {}, overloaded {}{}\n", answer_text(slice.result),
                 ans.kv_tokens ? fmt::format("{}", *ans.kv_tokens) : std::string("-"), yes_no(ans.overloaded),
                 sc.slo.any() ? fmt::format(", SLO met {}", yes_no(ans.slo_met)) : "");
    }
    if (joint->chosen)
      fmt::print("  use          {} ({} = {:.6g}: {})\n", fmt::join(joint->flags, " "), joint->with.name,
                 joint->slices[*joint->chosen].with_value, kJointRule);
    else
      fmt::print("  use          none: no pair is safe on every variant, not overloaded{}\n",
                 sc.slo.any() ? " and meeting the SLO" : "");
  }
  if (r.answer.overloaded == true && !joint)
    fmt::print("  note         the answer is overloaded on the base variant: its queue grows without bound\n");
  fmt::print("  outputs      {}/frontier.csv, tune.json, scenario.resolved.yaml, report.html\n", out.string());
  if (!images.empty()) fmt::print("  charts       {} files in {}\n", images.size(), out.string());
  std::fflush(stdout);  // the table before --fail-on's line on stderr
  fail_if_held(held);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune", "Find the most aggressive value of a knob that never runs out of memory");
  cmd->add_option("scenario", args->scenario, "Scenario YAML (see docs/scenario.md)")->required();
  cmd->add_option("--knob", args->knob,
                  "gpu_memory_utilization, max_num_seqs, max_num_batched_tokens (vLLM), mem_fraction_static, "
                  "max_running_requests, chunked_prefill_size (SGLang), mem_fraction, running_max_req_size, "
                  "batch_max_tokens (LightLLM), or policy.fraction, policy.mem_fraction, policy.k, policy.margin_mib, "
                  "policy.floor_mib, policy.canary_mib")
      ->required();
  cmd->add_option("--range", args->range, "LO:HI, e.g. 0.80:0.95 (whole numbers for max_num_seqs and the other request and token knobs)")->required();
  cmd->add_option("--with", args->with,
                  "Tune jointly: KNOB=V1,V2,... (a second knob of the scenario, at most 16 values); the answer is the pair "
                  "with the most KV tokens that is safe, not overloaded and meets the SLO (docs/tune.md)");
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
  cmd->add_option("--fail-on", args->fail_on,
                  "Exit 3 (outputs written) when the answer holds one of: oom (no safe value), slo (no safe value meets "
                  "the SLO), overload (the answer is overloaded), comma-separated (docs/tune.md)");
  cmd->add_option("-j,--threads", args->threads, "Simulations at once (default: every core)");
  cmd->add_flag("--png", args->png, "Also render the report's charts to PNG files in the output folder (headless Chromium)");
  cmd->add_flag("--svg", args->svg, "Also render the report's charts to SVG files in the output folder (headless Chromium)");
  cmd->callback([args] { tune(*args); });
}

}  // namespace headroom::cli
