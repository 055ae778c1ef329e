// headroom replay SNAPSHOT: replays a recorded PyTorch allocator history through the model and
// reports how faithfully it is reproduced, then optional what-if configurations; with -o DIR it saves
// the results and report.html there.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/allocator/replay.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/output_folder.hpp"
#include "sim/cli/whole_number.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/report/chart_images.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/replay_outputs.hpp"
#include "sim/report/replay_report_page.hpp"
#include "sim/report/report_folder.hpp"

namespace headroom::cli {

namespace {

struct ReplayArgs {
  std::string snapshot;
  std::string alloc_conf;
  bool alloc_conf_given = false;
  std::vector<std::string> what_if;
  std::string capacity;
  std::string memory_fraction;
  std::string context;
  std::string gpu;
  std::string pytorch_version;
  int device = -1;
  bool json = false;
  bool check = false;
  std::string timeline_csv;
  std::string export_path;
  std::string out_dir;
  bool png = false;
  bool svg = false;
};

double pct(std::size_t a, std::size_t b) { return b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 100.0; }

void print_report(const std::string& path, const alloc::ReplayReport& r) {
  fmt::print("replay of {} (device {}, {} trace entries, config '{}')\n", path, r.device, r.events, r.config);
  fmt::print("  start state      {} segments, {} live blocks rebuilt from the final segments and the trace\n",
             r.start_segments, r.start_live_blocks);
  if (r.captures)
    fmt::print("  graph captures   {} inferred from the private pools' segments\n", r.captures);
  fmt::print("  allocations      {} replayed, {} at the recorded address ({:.2f}%)\n", r.allocations,
             r.address_matches, pct(r.address_matches, r.allocations));
  if (r.address_matches < r.allocations)
    fmt::print("                   first different address at trace entry {}\n", r.first_address_mismatch);
  fmt::print("  segment events   {} recorded, {} made identically by the model, {} made by the model only\n",
             r.segment_events, r.segment_matches, r.model_only_segment_events);
  if (r.unknown_frees) fmt::print("  unknown frees    {} (addresses never allocated in the window)\n", r.unknown_frees);
  if (r.recorded_ooms || r.model_ooms)
    fmt::print("  OOMs             {} recorded, {} in the model\n", r.recorded_ooms, r.model_ooms);
  if (r.first_model_oom) fmt::print("  first model OOM  {}\n", r.first_model_oom->message());
  if (r.final_state_compared)
    fmt::print("  final state      {}\n", r.final_state_matches ? "equals the snapshot's segments"
                                                                : "differs: " + r.first_difference);
  fmt::print("  allocated        peak {}, final {}\n", format_bytes(r.peak_allocated), format_bytes(r.final_allocated));
  fmt::print("  reserved         peak {}, final {}\n", format_bytes(r.peak_reserved), format_bytes(r.final_reserved));
  const alloc::Fragmentation& f = r.final_fragmentation;
  const alloc::Fragmentation& p = r.fragmentation_at_peak_reserved;
  fmt::print("  fragmentation    at peak reserved: {} reserved but unallocated, largest free block {}, {} free blocks\n",
             format_bytes(p.reserved_unallocated), format_bytes(p.largest_free_block), p.free_blocks);
  fmt::print("                   at the end:       {} reserved but unallocated, largest free block {}, {} free blocks\n",
             format_bytes(f.reserved_unallocated), format_bytes(f.largest_free_block), f.free_blocks);
}

void print_what_if_table(const std::vector<alloc::ReplayReport>& rows, std::optional<Bytes> capacity) {
  fmt::print("\nwhat-if: the same request stream from an empty cache on {}\n",
             capacity ? "a " + format_bytes(*capacity) + " device" : std::string("a device of unlimited capacity"));
  fmt::print("  {:<44} {:>12} {:>12} {:>10} {:>14} {:>12} {:>6}\n", "configuration", "peak reserv", "peak alloc",
             "cudaMalloc", "frag at peak", "largest free", "OOM");
  for (const auto& r : rows) {
    std::string name = r.config.empty() ? "(defaults)" : r.config;
    if (name.size() > 44) name = name.substr(0, 41) + "...";
    fmt::print("  {:<44} {:>12} {:>12} {:>10} {:>14} {:>12} {:>6}\n", name, format_bytes(r.peak_reserved),
               format_bytes(r.peak_allocated), r.cuda_malloc_calls,
               format_bytes(r.fragmentation_at_peak_reserved.reserved_unallocated),
               format_bytes(r.fragmentation_at_peak_reserved.largest_free_block),
               r.model_ooms ? fmt::format("{}", r.model_ooms) : std::string("no"));
  }
}

double parse_fraction(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  double f = 0;
  try {
    f = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(f > 0.0 && f <= 1.0))
    throw InputError(fmt::format("{}: expected a fraction in (0, 1], got '{}'", what, text));
  return f;
}

void run_replay(const ReplayArgs& a) {
  alloc::ReplayOptions base;
  base.device = a.device;
  base.check_invariants = a.check;
  if (a.alloc_conf_given) base.recorded = alloc::parse_alloc_conf(a.alloc_conf, "--alloc-conf");
  std::vector<alloc::AllocatorConfig> what_ifs;
  for (const std::string& w : a.what_if) what_ifs.push_back(alloc::parse_alloc_conf(w, "--what-if"));
  std::optional<Bytes> capacity;
  if (!a.gpu.empty()) {
    // The recorded device as a (measured) profile describes it: capacity, context, granularity;
    // --capacity and --context override its figures.
    device::GpuProfile gpu;
    try {
      gpu = device::load_gpu_profile(a.gpu);
    } catch (const InputError& e) {
      throw InputError(fmt::format("--gpu: {}", e.what()));
    }
    capacity = gpu.capacity_bytes;
    base.context = gpu.context_bytes;
    if (gpu.granularity_bytes) base.granularity = gpu.granularity_bytes;
  }
  if (!a.capacity.empty()) {
    capacity = parse_bytes(a.capacity, "--capacity");
    if (*capacity == 0) throw InputError(fmt::format("--capacity: expected a positive size, got '{}'", a.capacity));
  }
  // The recorded device as the OOM messages describe it: its total, the fraction the history ran
  // under, the memory outside PyTorch; the faithful replay and the what-ifs alike.
  base.capacity = capacity;
  if (!a.memory_fraction.empty()) {
    const double f = parse_fraction(a.memory_fraction, "--memory-fraction");
    if (!capacity)
      throw InputError("--memory-fraction: a fraction of the device needs its capacity; give --capacity (e.g. 85017493504 "
                       "for an H100 80GB HBM3 as PyTorch reads it)");
    base.memory_fraction = f;
  }
  if (!a.context.empty()) base.context = parse_bytes(a.context, "--context");
  if (!a.pytorch_version.empty()) base.pytorch = alloc::parse_pytorch_release(a.pytorch_version, "--pytorch-version");

  if ((a.png || a.svg) && a.out_dir.empty()) throw InputError("--png and --svg draw the report of -o DIR; give -o DIR");
  if (a.png) report::require_chart_renderer("png");
  if (a.svg) report::require_chart_renderer("svg");

  alloc::Snapshot snap = alloc::read_snapshot(a.snapshot);
  // The output folder is made and locked before the replays (a second replay into it is refused
  // now, not after its work), and written only once every result is computed.
  std::unique_ptr<OutputFolderLock> lock;
  if (!a.out_dir.empty()) lock = open_output_folder(a.out_dir);
  alloc::ReplayOptions faithful_options = base;
  faithful_options.keep_segments_at_peak = !a.out_dir.empty();  // the report's segment map at the peak
  alloc::ReplayReport faithful = alloc::replay_snapshot(snap, faithful_options);

  std::vector<alloc::ReplayReport> rows;
  if (!what_ifs.empty()) {
    // The recorded configuration first, on the same simulated device, as the baseline.
    alloc::ReplayOptions o = base;
    o.empty_cache_events = faithful.empty_cache_events;  // the program's own empty_cache() calls
    o.what_if = base.recorded.value_or(alloc::recorded_config(snap.allocator_settings));
    rows.push_back(alloc::replay_snapshot(snap, o));
    for (const auto& w : what_ifs) {
      o.what_if = w;
      rows.push_back(alloc::replay_snapshot(snap, o));
    }
  }
  // Every output is computed, report.html's page included (drawn from the texts the folder will hold,
  // as `headroom report DIR` would draw it from the saved files), before the first file is written.
  const nlohmann::json result = report::replay_result_json(a.snapshot, faithful, rows, capacity);
  const std::filesystem::path out(a.out_dir);
  std::map<std::string, std::string> files;
  nlohmann::json page;
  if (!a.out_dir.empty()) {
    files = report::replay_output_files(result, faithful, rows);
    page = report::replay_report_page(report::OutputFolder(out, files));
  }
  if (!a.timeline_csv.empty())
    write_file_atomically(a.timeline_csv, [&](std::ostream& o) { report::write_replay_timeline_csv(o, faithful.timeline); });
  if (!a.export_path.empty()) {
    const std::string& p = a.export_path;
    if (p.size() >= 5 && p.substr(p.size() - 5) == ".json") alloc::write_snapshot_json(faithful.final_model_state, p);
    else alloc::write_snapshot_pickle(faithful.final_model_state, p);
  }
  std::vector<std::filesystem::path> images;
  if (!a.out_dir.empty()) {
    StagedOutputs outputs;
    for (const char* name : {"replay.json", "timeline.csv", "what_if_timeline.csv", "segments.json"})
      if (files.count(name)) outputs.add(out / name, files[name]);
    outputs.add(out / "report.html", [&](std::ostream& o) { report::write_html_report(o, page); });
    outputs.commit();
    std::error_code ec;
    if (!files.count("what_if_timeline.csv")) std::filesystem::remove(out / "what_if_timeline.csv", ec);  // an earlier run's
    images = report::render_report_images(out / "report.html", page, a.png, a.svg);
  }
  if (a.json) {
    fmt::print("{}\n", result.dump(2));
    return;
  }
  print_report(a.snapshot, faithful);
  if (!rows.empty()) print_what_if_table(rows, capacity);
  if (!a.out_dir.empty()) {
    fmt::print("\noutputs in {}: replay.json, timeline.csv, segments.json{}, report.html\n", a.out_dir,
               rows.empty() ? "" : ", what_if_timeline.csv");
    if (!images.empty()) fmt::print("charts: {} files in {}\n", images.size(), a.out_dir);
  }
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto args = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand("replay", "Replay a PyTorch memory snapshot through the allocator model");
  cmd->add_option("snapshot", args->snapshot, "Snapshot: a pickle from torch.cuda.memory._dump_snapshot() or its JSON")
      ->required();
  cmd->add_option_function<std::string>(
      "--alloc-conf", [args](const std::string& s) { args->alloc_conf = s, args->alloc_conf_given = true; },
      "PYTORCH_CUDA_ALLOC_CONF the history ran under (default: the snapshot's allocator_settings)");
  cmd->add_option("--what-if", args->what_if,
                  "Also replay the request stream under this PYTORCH_CUDA_ALLOC_CONF (repeatable), "
                  "e.g. expandable_segments:True or max_split_size_mb:128");
  cmd->add_option("--capacity", args->capacity,
                  "Device capacity (cudaMemGetInfo total), e.g. 24GiB or 85017493504: the OOM messages' total and the "
                  "--what-if runs' device (default: unlimited)");
  cmd->add_option("--memory-fraction", args->memory_fraction,
                  "torch.cuda.set_per_process_memory_fraction the history ran under, in (0, 1]; needs --capacity");
  cmd->add_option("--context", args->context,
                  "This process's device memory outside PyTorch (CUDA context, cuBLAS workspaces), e.g. 690MiB: the "
                  "OOM messages' 'this process has' figure and what the --what-if runs' device cannot use (default: 0, or --gpu's)");
  cmd->add_option("--gpu", args->gpu,
                  "GPU profile of the recorded device (built-in name or YAML, e.g. h100-80gb-hbm3-measured): its "
                  "capacity, context and granularity for the OOM messages and the --what-if runs' device (--capacity "
                  "and --context override)");
  cmd->add_option("--pytorch-version", args->pytorch_version,
                  "PyTorch release whose OOM message text to write (default and only one: 2.11)");
  cmd->add_option_function<std::string>(
      "--device", [args](const std::string& s) { args->device = static_cast<int>(whole_number(s, "--device", 0, 1023)); },
      "Device index to replay (default: the first with a trace)");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of the text report");
  cmd->add_flag("--check", args->check, "Check the allocator invariants after every event (slow)");
  cmd->add_option("--timeline", args->timeline_csv, "Write the fragmentation timeline as CSV");
  cmd->add_option("--export", args->export_path, "Write the model's final state as a snapshot (.json or .pickle)");
  cmd->add_option("-o,--output", args->out_dir,
                  "Output folder: replay.json, timeline.csv, segments.json, what_if_timeline.csv and report.html");
  cmd->add_flag("--png", args->png, "Also render the report's charts to PNG files in the output folder (headless Chromium)");
  cmd->add_flag("--svg", args->svg, "Also render the report's charts to SVG files in the output folder (headless Chromium)");
  cmd->callback([args] { run_replay(*args); });
}

}  // namespace headroom::cli
