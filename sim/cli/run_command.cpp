// headroom run SCENARIO: start the engine through the allocator model, replay the workload, and say
// whether (and when, and why) it runs out of memory. Writes summary.json, timeline.csv, requests.csv
// the resolved scenario (every default filled in) and report.html into the output folder.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/cli/fail_on.hpp"
#include "sim/cli/output_folder.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/shell_words.hpp"
#include "sim/core/text_writer.hpp"
#include "sim/engine/startup.hpp"
#include "sim/policy/policy.hpp"
#include "sim/report/chart_images.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/report_folder.hpp"
#include "sim/report/run_report.hpp"
#include "sim/report/run_report_page.hpp"
#include "sim/report/verdict.hpp"
#include "sim/scenario/deployment_facts.hpp"
#include "sim/scenario/import_scenario.hpp"
#include "sim/scenario/resolved_scenario.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/outcome.hpp"

namespace headroom::cli {

namespace {

struct RunArgs {
  std::string scenario;
  std::string out_dir;
  bool json = false;
  bool check = false;
  bool no_progress = false;
  bool png = false;
  bool svg = false;
  std::string cmd;       // --cmd: a server's command line instead of a scenario (docs/import.md)
  std::string workload;  // with --cmd: the workload (scenario::ImportInputs)
  std::string gpu;       // with --cmd: the GPU profile
  std::optional<std::string> fail_on;  // --fail-on oom,slo,overload (fail_on.hpp)
};

// The scenario `run` simulates: the file, or the one --cmd's command line makes (import_scenario).
// `source_text`: set to the YAML --cmd made (scenario.resolved.yaml takes its workload from it).
scenario::Scenario run_scenario(const RunArgs& a, std::string* source_text) {
  if (a.cmd.empty()) {
    if (!a.workload.empty() || !a.gpu.empty())
      throw InputError(fmt::format("{}: only with --cmd (a scenario file names its own)", a.workload.empty() ? "--gpu" : "--workload"));
    if (a.scenario.empty()) throw InputError("scenario is required (a scenario YAML, or --cmd \"<engine command line>\")");
    return scenario::load_scenario(a.scenario);
  }
  if (!a.scenario.empty()) throw InputError(fmt::format("--cmd: give a scenario file or --cmd, not both (got '{}')", a.scenario));
  scenario::ImportInputs in;
  in.what = "--cmd";
  in.words = shell_words(a.cmd, in.what);
  if (!a.workload.empty()) in.workload = a.workload;
  if (!a.gpu.empty()) in.gpu = a.gpu;
  const scenario::ImportedScenario imported = scenario::import_scenario(in);
  for (const std::string& n : imported.notes) fmt::print(stderr, "  --cmd            {}\n", n);
  if (source_text) *source_text = imported.yaml;
  return scenario::parse_scenario(imported.yaml, in.what, std::filesystem::current_path());
}

void print_startup(const scenario::Scenario& sc, const engine::StartupResult& st) {
  fmt::print("{}: {} on {} ({}), {} tp={}\n", sc.name, scenario::engine_label(st.config), sc.gpu.name, sc.gpu.source,
             sc.model.name, sc.tp);
  if (!st.ok) {
    fmt::print("  start-up         FAILED at {}: {}\n", engine::startup_stage_name(st.stage), st.failure);
    return;
  }
  const auto& b = st.bytes;
  fmt::print("  start-up         ok: {} KV tokens ({} blocks of {}), max {} running requests, {} graph sizes\n",
             st.kv_tokens, st.kv_blocks, st.kv_block_tokens, st.max_running_requests, st.graph_batch_sizes.size());
  // SGLang's SWA pool (serving-memory-model.md §2.2): the KV tokens above are the full pool's.
  if (const auto* f = std::get_if<engine::SglangFigures>(&st.figures); f && f->swa_tokens > 0)
    fmt::print("  SWA pool         {} tokens for {} {} layers (window {}); the {} KV tokens above serve {} "
               "full-attention layers\n",
               f->swa_tokens, f->swa_layers, f->swa_layers_chunked ? "chunked local attention" : "sliding-window",
               f->sliding_window, st.kv_tokens, f->full_layers);
  fmt::print("  reserved for     weights {}, rotary tables {}, KV {}, workspaces {}, request pool {}, graph pool {}, "
             "non-torch {}\n",
             format_bytes(b.weights), format_bytes(b.rotary_cache), format_bytes(b.kv_cache), format_bytes(b.workspaces),
             format_bytes(b.request_pool), format_bytes(b.graph_pool), format_bytes(b.non_torch));
  fmt::print("  device free      {} after start-up (torch reserved {})\n", format_bytes(b.device_free),
             format_bytes(b.reserved));
  // A multi-GPU deployment: the rank simulated, why, and its communicators' memory (§9).
  const engine::ParallelStartup& p = st.parallel;
  if (!p.communicators.communicators.empty() || p.placement.pp > 1 || p.placement.moe_ep > 1)
    fmt::print("  rank             {}: {}; NCCL {} in {} communicators, custom all-reduce {} + {} rank_data\n", p.rank,
               p.why, format_bytes(p.communicators.nccl), p.communicators.communicators.size(),
               format_bytes(p.communicators.custom_all_reduce), format_bytes(p.communicators.custom_all_reduce_rank_data));
}

void print_serving(const report::Outcome& s, const nlohmann::json& summary) {
  const engine::ServingResult& r = *s.serving;
  if (r.died) {
    const engine::OomEvent& e = r.ooms.front();
    fmt::print("  OOM              at {:.3f} s, step {} ({} tokens over {} sequences), allocating {}\n", e.time_s,
               e.step, e.tokens, e.seqs, e.tensor);
    fmt::print("                   {}\n", e.info.message());
  } else if (!r.ooms.empty()) {
    fmt::print("  OOMs             {} would-be OOMs (on_oom: continue), first at {:.3f} s allocating {}\n",
               r.oom_count, r.ooms.front().time_s, r.ooms.front().tensor);
  } else {
    fmt::print("  OOM              none\n");
  }
  fmt::print("  requests         {} arrived, {} completed, {} dropped, {} rejected at arrival (too long for the engine)\n",
             r.arrived, r.completed, r.aborted, r.rejected);
  fmt::print("  preemptions      {}\n", r.preemptions);
  // A distribution without a sample (nothing completed) is "-", never 0.
  auto seconds = [](const report::Distribution& d, double v) { return d.count ? fmt::format("{:.3f} s", v) : "-"; };
  auto millis = [](const report::Distribution& d, double v) { return d.count ? fmt::format("{:.1f} ms", v * 1e3) : "-"; };
  fmt::print("  queue            p50 {}, p99 {} (arrival to first scheduled)\n", seconds(s.queue, s.queue.p50),
             seconds(s.queue, s.queue.p99));
  fmt::print("  TTFT             p50 {}, p99 {}\n", seconds(s.ttft, s.ttft.p50), seconds(s.ttft, s.ttft.p99));
  fmt::print("  TPOT             p50 {}, p99 {}\n", millis(s.tpot, s.tpot.p50), millis(s.tpot, s.tpot.p99));
  fmt::print("  e2e              p50 {}, p99 {}\n", seconds(s.e2e, s.e2e.p50), seconds(s.e2e, s.e2e.p99));
  fmt::print("  throughput       {:.0f} output tokens/s, {:.2f} requests/s over {:.1f} s simulated, {} steps\n",
             s.tokens_per_s, s.requests_per_s, r.end_time_s, r.steps);
  fmt::print("  memory           peak allocated {}, peak reserved {}\n", format_bytes(r.peak_allocated),
             format_bytes(r.peak_reserved));
  const auto& f = r.fragmentation_at_peak_reserved;
  fmt::print("  fragmentation    at peak reserved: {} reserved but unallocated, largest free block {}, {} free blocks\n",
             format_bytes(f.reserved_unallocated), format_bytes(f.largest_free_block), f.free_blocks);
  fmt::print("  headroom         {}\n", report::headroom_line(summary.at("headroom")));
}

void run(const RunArgs& a) {
  namespace fs = std::filesystem;
  std::string source_text;  // --cmd's scenario, which is no file
  scenario::Scenario sc = run_scenario(a, &source_text);
  const FailOn fail_on = a.fail_on ? parse_fail_on(*a.fail_on, sc.slo.any()) : FailOn{};
  if (a.png) report::require_chart_renderer("png");
  if (a.svg) report::require_chart_renderer("svg");
  fs::path out = a.out_dir.empty() ? scenario::default_output_folder(sc) : fs::path(a.out_dir);
  const auto lock = open_output_folder(out);

  // The request rows go to requests.csv as they finish; it is renamed into place only at the end.
  AtomicOutputFile requests_csv(out / "requests.csv");
  TextWriter requests(requests_csv.stream());
  report::write_request_header(requests);
  const bool progress = !a.no_progress && !a.json && ::isatty(STDERR_FILENO);
  scenario::SimulateOptions options;
  options.check_invariants = a.check;  // from the first weight tensor on
  options.on_started = [&](const policy::PolicyStart& started) {
    if (a.json) return;
    print_startup(sc, started.startup);
    if (sc.policy.kind != policy::PolicyKind::engine) {
      fmt::print("  policy           {}{}\n", policy::describe(sc.policy),
                 started.attempts > 1 ? fmt::format(", {} attempts", started.attempts) : "");
      for (const std::string& n : started.notes) fmt::print("                   {}\n", n);
    }
  };
  options.on_request = [&](const engine::RequestRecord& r) { report::write_request_row(requests, r); };
  options.on_progress = [&](double now) {
    if (progress) std::fprintf(stderr, "\r  simulating       %.1f s of the trace...", now);
  };
  const report::Outcome outcome = scenario::simulate(sc, sc.policy, options);
  const engine::StartupResult& st = outcome.start.startup;
  if (progress && st.ok) std::fprintf(stderr, "\r%60s\r", "");

  report::RunContext run;
  run.scenario = sc.name;
  run.engine = scenario::engine_label(st.config);
  run.model = sc.model.name;
  run.gpu = sc.gpu.name;
  run.gpu_source = sc.gpu.source;
  run.capacity = sc.visible.value_or(sc.gpu.capacity_bytes);
  nlohmann::json j = report::summary_json(run, outcome);
  const report::Verdict verdict = report::judge(
      outcome, sc.slo, fmt::format("{} on {} with {}", run.engine, run.gpu, run.model), report::verdict(run, outcome));
  j["slo"] = report::slo_json(sc.slo);
  j["verdict"] = report::verdict_json(verdict);
  // Every output's text is ready before the first file is written (docs/bad-input.md), and report.html's
  // page: drawn from these texts, as `headroom report DIR` would draw it from the saved files, and
  // streamed to its file (write_html_report) with the others staged.
  const std::string summary_text = j.dump(2) + "\n";
  const std::string resolved = scenario::resolved_scenario_yaml(sc, st.config, source_text);
  TextWriter timeline;
  report::write_timeline_csv(timeline, st, st.ok ? outcome.serving->timeline : std::vector<engine::TimelinePoint>{});
  const std::string timeline_text = timeline.text();
  const nlohmann::json page = report::run_report_page(report::OutputFolder(
      out, {{"summary.json", summary_text}, {"timeline.csv", timeline_text}, {"scenario.resolved.yaml", resolved}}));
  StagedOutputs outputs;
  outputs.add(out / "summary.json", summary_text);
  outputs.add(out / "timeline.csv", timeline_text);
  requests.flush();
  outputs.adopt(requests_csv);
  outputs.add(out / "scenario.resolved.yaml", resolved);
  outputs.add(out / "report.html", [&](std::ostream& o) { report::write_html_report(o, page); });
  outputs.commit();
  const std::vector<fs::path> images = report::render_report_images(out / "report.html", page, a.png, a.svg);
  if (a.json) {
    fmt::print("{}\n", j.dump(2));
  } else {
    if (st.ok) print_serving(outcome, j);
    fmt::print("  verdict          {}\n", verdict.text);
    fmt::print("  outputs          {}/summary.json, timeline.csv, requests.csv, scenario.resolved.yaml, report.html\n",
               out.string());
    if (!images.empty()) fmt::print("  charts           {} files in {}\n", images.size(), out.string());
  }
  std::fflush(stdout);  // the verdict before --fail-on's line on stderr
  fail_if_held(conditions_held(fail_on, verdict));
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Start an engine and replay a workload through it (a scenario file)");
  cmd->add_option("scenario", args->scenario, "Scenario YAML (see docs/scenario.md)");
  cmd->add_option("--cmd", args->cmd, "A server's command line instead of a scenario, quoted (docs/import.md)");
  cmd->add_option("--workload", args->workload, "With --cmd: a scenario or workload YAML, or a trace file");
  cmd->add_option("--gpu", args->gpu, "With --cmd: a GPU profile (built-in name or YAML)");
  cmd->add_option("-o,--output", args->out_dir, "Output folder (default: out/<scenario name>)");
  cmd->add_flag("--json", args->json, "Print summary.json instead of the text verdict");
  cmd->add_flag("--check", args->check, "Check the allocator's invariants after each of its operations (start-up included) and the scheduler's and KV manager's after every scheduler call (slow)");
  cmd->add_flag("--no-progress", args->no_progress, "No progress line on the terminal");
  cmd->add_option("--fail-on", args->fail_on,
                  "Exit 3 (outputs written) when any of these holds: oom, slo, overload, comma-separated (docs/run.md)");
  cmd->add_flag("--png", args->png, "Also render the report's charts to PNG files in the output folder (headless Chromium)");
  cmd->add_flag("--svg", args->svg, "Also render the report's charts to SVG files in the output folder (headless Chromium)");
  cmd->callback([args] { run(*args); });
}

}  // namespace headroom::cli
