// headroom replay SNAPSHOT: replays a recorded PyTorch allocator history through the model and
// reports how faithfully it is reproduced, then optional what-if configurations.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/allocator/replay.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"

namespace headroom::cli {

namespace {

struct ReplayArgs {
  std::string snapshot;
  std::string alloc_conf;
  bool alloc_conf_given = false;
  std::vector<std::string> what_if;
  std::string capacity;
  int device = -1;
  bool json = false;
  bool check = false;
  std::string timeline_csv;
  std::string export_path;
};

double pct(std::size_t a, std::size_t b) { return b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 100.0; }

nlohmann::json fragmentation_json(const alloc::Fragmentation& f) {
  return {{"reserved_bytes", f.reserved},
          {"allocated_bytes", f.allocated},
          {"reserved_unallocated_bytes", f.reserved_unallocated},
          {"largest_free_block_bytes", f.largest_free_block},
          {"free_blocks", f.free_blocks}};
}

nlohmann::json oom_json(const std::optional<alloc::OomInfo>& oom) {
  if (!oom) return nullptr;
  return {{"tried_bytes", oom->alloc_size}, {"requested_bytes", oom->requested}, {"free_bytes", oom->free},
          {"allocated_bytes", oom->allocated}, {"reserved_bytes", oom->reserved},
          {"reserved_unallocated_bytes", oom->reserved > oom->allocated ? oom->reserved - oom->allocated : 0},
          {"message", oom->message()}};
}

nlohmann::json report_json(const alloc::ReplayReport& r) {
  nlohmann::json j;
  j["config"] = r.config;
  j["device"] = r.device;
  j["events"] = r.events;
  j["allocations"] = r.allocations;
  j["address_matches"] = r.address_matches;
  j["frees"] = r.frees;
  j["unknown_frees"] = r.unknown_frees;
  j["segment_events"] = r.segment_events;
  j["segment_matches"] = r.segment_matches;
  j["model_only_segment_events"] = r.model_only_segment_events;
  j["recorded_ooms"] = r.recorded_ooms;
  j["model_ooms"] = r.model_ooms;
  j["first_model_oom"] = oom_json(r.first_model_oom);
  j["start_segments"] = r.start_segments;
  j["start_live_blocks"] = r.start_live_blocks;
  if (r.final_state_compared) {
    j["final_state_matches"] = r.final_state_matches;
    j["first_difference"] = r.first_difference.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.first_difference);
  }
  j["peak_allocated_bytes"] = r.peak_allocated;
  j["peak_reserved_bytes"] = r.peak_reserved;
  j["final_allocated_bytes"] = r.final_allocated;
  j["final_reserved_bytes"] = r.final_reserved;
  j["cuda_malloc_calls"] = r.cuda_malloc_calls;
  j["cuda_free_calls"] = r.cuda_free_calls;
  j["fragmentation"] = {{"final", fragmentation_json(r.final_fragmentation)},
                        {"at_peak_reserved", fragmentation_json(r.fragmentation_at_peak_reserved)}};
  return j;
}

void print_report(const std::string& path, const alloc::ReplayReport& r) {
  fmt::print("replay of {} (device {}, {} trace entries, config '{}')\n", path, r.device, r.events, r.config);
  fmt::print("  start state      {} segments, {} live blocks rebuilt from the final segments and the trace\n",
             r.start_segments, r.start_live_blocks);
  fmt::print("  allocations      {} replayed, {} at the recorded address ({:.2f}%)\n", r.allocations,
             r.address_matches, pct(r.address_matches, r.allocations));
  if (r.address_matches < r.allocations)
    fmt::print("                   first different address at trace entry {}\n", r.first_address_mismatch);
  fmt::print("  segment events   {} recorded, {} made identically by the model, {} made by the model only\n",
             r.segment_events, r.segment_matches, r.model_only_segment_events);
  if (r.unknown_frees) fmt::print("  unknown frees    {} (addresses never allocated in the window)\n", r.unknown_frees);
  if (r.recorded_ooms || r.model_ooms)
    fmt::print("  OOMs             {} recorded, {} in the model\n", r.recorded_ooms, r.model_ooms);
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

void write_timeline(const std::string& path, const alloc::ReplayReport& r) {
  write_file_atomically(path, [&](std::ostream& out) {
    out << "event_index,time_us,allocated_bytes,reserved_bytes,reserved_unallocated_bytes,largest_free_block_bytes,"
           "free_blocks\n";
    for (const auto& p : r.timeline)
      out << fmt::format("{},{},{},{},{},{},{}\n", p.event_index, p.time_us, p.allocated, p.reserved,
                         p.reserved - p.allocated, p.largest_free_block, p.free_blocks);
  });
}

void run_replay(const ReplayArgs& a) {
  alloc::ReplayOptions base;
  base.device = a.device;
  base.check_invariants = a.check;
  if (a.alloc_conf_given) base.recorded = alloc::parse_alloc_conf(a.alloc_conf, "--alloc-conf");
  std::vector<alloc::AllocatorConfig> what_ifs;
  for (const std::string& w : a.what_if) what_ifs.push_back(alloc::parse_alloc_conf(w, "--what-if"));
  std::optional<Bytes> capacity;
  if (!a.capacity.empty()) capacity = parse_bytes(a.capacity, "--capacity");
  if (capacity && what_ifs.empty())
    throw InputError("--capacity applies to --what-if runs; give at least one --what-if configuration");

  alloc::Snapshot snap = alloc::read_snapshot(a.snapshot);
  alloc::ReplayReport faithful = alloc::replay_snapshot(snap, base);

  std::vector<alloc::ReplayReport> rows;
  if (!what_ifs.empty()) {
    // The recorded configuration first, on the same simulated device, as the baseline.
    alloc::ReplayOptions o = base;
    o.what_if = base.recorded.value_or(alloc::recorded_config(snap.allocator_settings));
    o.capacity = capacity;
    rows.push_back(alloc::replay_snapshot(snap, o));
    for (const auto& w : what_ifs) {
      o.what_if = w;
      rows.push_back(alloc::replay_snapshot(snap, o));
    }
  }
  if (!a.timeline_csv.empty()) write_timeline(a.timeline_csv, faithful);
  if (!a.export_path.empty()) {
    const std::string& p = a.export_path;
    if (p.size() >= 5 && p.substr(p.size() - 5) == ".json") alloc::write_snapshot_json(faithful.final_model_state, p);
    else alloc::write_snapshot_pickle(faithful.final_model_state, p);
  }
  if (a.json) {
    nlohmann::json j = report_json(faithful);
    j["snapshot"] = a.snapshot;
    if (!rows.empty()) {
      j["what_if"] = nlohmann::json::array();
      for (const auto& r : rows) {
        nlohmann::json w = report_json(r);
        w["capacity_bytes"] = capacity ? nlohmann::json(*capacity) : nlohmann::json(nullptr);
        w["would_oom"] = r.model_ooms > 0;
        j["what_if"].push_back(w);
      }
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }
  print_report(a.snapshot, faithful);
  if (!rows.empty()) print_what_if_table(rows, capacity);
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
  cmd->add_option("--capacity", args->capacity, "Device capacity for --what-if runs, e.g. 24GiB (default: unlimited)");
  cmd->add_option("--device", args->device, "Device index to replay (default: the first with a trace)");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of the text report");
  cmd->add_flag("--check", args->check, "Check the allocator invariants after every event (slow)");
  cmd->add_option("--timeline", args->timeline_csv, "Write the fragmentation timeline as CSV");
  cmd->add_option("--export", args->export_path, "Write the model's final state as a snapshot (.json or .pickle)");
  cmd->callback([args] { run_replay(*args); });
}

}  // namespace headroom::cli
