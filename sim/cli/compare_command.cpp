// headroom compare SCENARIO [--policies FILE]: the same workload under each start-up policy, one
// row per policy. Writes comparison.json (with the deployment the report names), one timeline per
// policy, the scenario as resolved and report.html into the output folder.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "sim/cli/commands.hpp"
#include "sim/cli/fail_on.hpp"
#include "sim/cli/output_folder.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text_writer.hpp"
#include "sim/core/progress.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/report/chart_images.hpp"
#include "sim/report/compare_report_page.hpp"
#include "sim/report/comparison_report.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/report_folder.hpp"
#include "sim/report/run_report.hpp"
#include "sim/scenario/comparison.hpp"
#include "sim/scenario/deployment_facts.hpp"
#include "sim/scenario/policy_yaml.hpp"
#include "sim/scenario/resolved_scenario.hpp"

namespace headroom::cli {

namespace {

struct CompareArgs {
  std::string scenario;
  std::string policies;
  std::string out_dir;
  bool json = false;
  unsigned threads = 0;
  bool png = false;
  bool svg = false;
  std::optional<std::string> fail_on;  // --fail-on (fail_on.hpp): held by any policy
};

// A file-name-safe form of a label: letters, digits, '-', '_', '.'; the rest becomes '_'.
std::string slug(const std::string& label) {
  std::string s;
  for (char c : label) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return s.substr(0, 80);
}

void compare(const CompareArgs& a) {
  namespace fs = std::filesystem;
  scenario::Scenario sc = scenario::load_scenario(a.scenario);
  std::vector<policy::PolicySpec> policies = !a.policies.empty() ? scenario::load_policies(a.policies)
                                             : !sc.compare.empty() ? sc.compare
                                                                   : scenario::default_policies();
  const FailOn fail_on = a.fail_on ? parse_fail_on(*a.fail_on, sc.slo.any()) : FailOn{};
  if (a.png) report::require_chart_renderer("png");
  if (a.svg) report::require_chart_renderer("svg");
  const std::string resolved = scenario::resolved_scenario_yaml(sc);
  fs::path out = a.out_dir.empty() ? scenario::default_output_folder(sc) / "compare" : fs::path(a.out_dir);
  const auto lock = open_output_folder(out);

  std::vector<scenario::Outcome> outcomes = [&] {
    // One point per policy on the terminal; cleared before any output.
    Progress progress = Progress::on_stderr("compare", policies.size());
    return scenario::compare_policies(sc, policies, a.threads, &progress);
  }();
  const bool amd = sc.gpu.vendor == "amd";
  std::vector<report::ComparisonRow> rows;
  for (const scenario::Outcome& o : outcomes) rows.push_back(scenario::comparison_row(o, amd, sc.slo));
  report::finish_comparison(rows);
  nlohmann::json j = report::comparison_json(sc.name, rows);
  j["slo"] = report::slo_json(sc.slo);
  j.update(scenario::deployment_facts_json(sc));
  // For each policy that is no engine setting, the engine's own flags giving the KV capacity it got.
  std::vector<std::string> settings(outcomes.size());
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const scenario::Outcome& o = outcomes[i];
    const bool engine_setting = o.spec.kind == policy::PolicyKind::engine || o.spec.kind == policy::PolicyKind::allocator;
    if (o.started() && !engine_setting)
      settings[i] = engine::engine_traits(o.start.startup.config).capacity_setting(o.start.startup);
    j["policies"][i]["engine_setting"] = settings[i].empty() ? nlohmann::json(nullptr) : nlohmann::json(settings[i]);
  }
  std::vector<std::string> files(outcomes.size());
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].started()) files[i] = fmt::format("timeline.{:02}.{}.csv", i, slug(outcomes[i].label));
    j["policies"][i]["timeline_csv"] = files[i].empty() ? nlohmann::json(nullptr) : nlohmann::json(files[i]);
  }
  // Every output's text is ready before the first file is written (docs/bad-input.md), and report.html's
  // page: drawn from these texts, as `headroom report DIR` would draw it from the saved files, and
  // streamed to its file (write_html_report) with the others staged.
  std::map<std::string, std::string> texts;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (files[i].empty()) continue;
    const scenario::Outcome& o = outcomes[i];
    TextWriter s;
    report::write_timeline_csv(s, o.start.startup, o.serving->timeline);
    texts[files[i]] = s.text();
  }
  texts["scenario.resolved.yaml"] = resolved;
  texts["comparison.json"] = j.dump(2) + "\n";
  const nlohmann::json page = report::compare_report_page(report::OutputFolder(out, texts));
  StagedOutputs outputs;
  for (const std::string& f : files)
    if (!f.empty()) outputs.add(out / f, texts[f]);
  outputs.add(out / "scenario.resolved.yaml", resolved);
  outputs.add(out / "comparison.json", texts["comparison.json"]);
  outputs.add(out / "report.html", [&](std::ostream& o) { report::write_html_report(o, page); });
  outputs.commit();
  const std::vector<fs::path> images = report::render_report_images(out / "report.html", page, a.png, a.svg);
  std::vector<std::string> held;
  for (const report::ComparisonRow& r : rows)
    for (std::string& h : conditions_held(fail_on, r.judged, r.label)) held.push_back(std::move(h));
  if (a.json) {
    fmt::print("{}\n", j.dump(2));
    std::fflush(stdout);
    fail_if_held(held);
    return;
  }
  report::print_comparison(std::cout, fmt::format("{}: {} policies on the same workload", sc.name, rows.size()), rows);
  bool any_setting = false;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    if (settings[i].empty()) continue;
    if (!any_setting) fmt::print("  as engine settings (the same KV capacity without the policy):\n");
    any_setting = true;
    fmt::print("    {:<28} {}\n", outcomes[i].label, settings[i]);
  }
  fmt::print("  outputs: {}/comparison.json, a timeline per policy, scenario.resolved.yaml, report.html\n", out.string());
  if (!images.empty()) fmt::print("  charts: {} files in {}\n", images.size(), out.string());
  std::cout.flush();  // the table before --fail-on's line on stderr
  std::fflush(stdout);
  fail_if_held(held);
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand("compare", "Run the same scenario under each start-up policy and compare them");
  cmd->add_option("scenario", args->scenario, "Scenario YAML (see docs/scenario.md)")->required();
  cmd->add_option("--policies", args->policies,
                  "YAML list of policies (default: the scenario's compare: list, else every policy)");
  cmd->add_option("-o,--output", args->out_dir, "Output folder (default: out/<scenario name>/compare)");
  cmd->add_flag("--json", args->json, "Print comparison.json instead of the table");
  cmd->add_option("--fail-on", args->fail_on,
                  "Exit 3 (outputs written) when any policy's run holds one of: oom, slo, overload, comma-separated "
                  "(docs/compare-and-policies.md)");
  cmd->add_option("-j,--threads", args->threads, "Simulations at once (default: every core)");
  cmd->add_flag("--png", args->png, "Also render the report's charts to PNG files in the output folder (headless Chromium)");
  cmd->add_flag("--svg", args->svg, "Also render the report's charts to SVG files in the output folder (headless Chromium)");
  cmd->callback([args] { compare(*args); });
}

}  // namespace headroom::cli
