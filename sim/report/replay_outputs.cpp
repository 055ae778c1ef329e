#include "sim/report/replay_outputs.hpp"

#include <string_view>

#include <fmt/compile.h>
#include <fmt/format.h>

namespace headroom::report {

namespace {

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

void write_points(TextWriter& out, std::string_view prefix, const std::vector<alloc::ReplayPoint>& timeline) {
  for (const auto& p : timeline) {
    out.write(prefix);
    out.print(FMT_COMPILE("{},{},{},{},{},{},{}\n"), p.event_index, p.time_us, p.allocated, p.reserved,
              p.reserved - p.allocated, p.largest_free_block, p.free_blocks);
  }
}

constexpr const char* kTimelineColumns =
    "event_index,time_us,allocated_bytes,reserved_bytes,reserved_unallocated_bytes,largest_free_block_bytes,free_blocks";

}  // namespace

nlohmann::json replay_report_json(const alloc::ReplayReport& r) {
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

nlohmann::json replay_result_json(const std::string& snapshot, const alloc::ReplayReport& faithful,
                                  const std::vector<alloc::ReplayReport>& what_if, std::optional<Bytes> capacity) {
  nlohmann::json j = replay_report_json(faithful);
  j["snapshot"] = snapshot;
  if (!what_if.empty()) {
    j["what_if"] = nlohmann::json::array();
    for (const auto& r : what_if) {
      nlohmann::json w = replay_report_json(r);
      w["capacity_bytes"] = capacity ? nlohmann::json(*capacity) : nlohmann::json(nullptr);
      w["would_oom"] = r.model_ooms > 0;
      j["what_if"].push_back(w);
    }
  }
  return j;
}

void write_replay_timeline_csv(TextWriter& out, const std::vector<alloc::ReplayPoint>& timeline) {
  out.write(kTimelineColumns);
  out.put('\n');
  write_points(out, "", timeline);
}

void write_replay_timeline_csv(std::ostream& out, const std::vector<alloc::ReplayPoint>& timeline) {
  TextWriter w(out);
  write_replay_timeline_csv(w, timeline);
}

void write_what_if_timeline_csv(TextWriter& out, const std::vector<alloc::ReplayReport>& what_if) {
  out.write("configuration,");
  out.write(kTimelineColumns);
  out.put('\n');
  for (std::size_t i = 0; i < what_if.size(); ++i) write_points(out, fmt::format("{},", i), what_if[i].timeline);
}

nlohmann::json segments_json(const std::vector<alloc::SnapshotSegment>& segments) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : segments) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& b : s.blocks) {
      const int state = b.state == alloc::BlockState::ActiveAllocated ? 0
                        : b.state == alloc::BlockState::ActivePendingFree ? 1 : 2;
      blocks.push_back({b.address - s.address, b.size, b.requested_size, state});
    }
    out.push_back({{"address", s.address}, {"total_size", s.total_size}, {"stream", s.stream},
                   {"pool", s.is_large ? "large" : "small"}, {"pool_id", {s.pool_id.first, s.pool_id.second}},
                   {"expandable", s.is_expandable}, {"blocks", blocks}});
  }
  return out;
}

std::map<std::string, std::string> replay_output_files(const nlohmann::json& result, const alloc::ReplayReport& faithful,
                                                       const std::vector<alloc::ReplayReport>& what_if) {
  std::map<std::string, std::string> files;
  files["replay.json"] = result.dump(2) + "\n";
  TextWriter timeline;
  write_replay_timeline_csv(timeline, faithful.timeline);
  files["timeline.csv"] = timeline.text();
  if (!what_if.empty()) {
    TextWriter w;
    write_what_if_timeline_csv(w, what_if);
    files["what_if_timeline.csv"] = w.text();
  }
  const nlohmann::json maps = {
      {"at_peak_reserved", {{"event_index", faithful.peak_reserved_event},
                            {"segments", segments_json(faithful.segments_at_peak_reserved)}}},
      {"final", {{"event_index", faithful.events}, {"segments", segments_json(faithful.final_model_state.segments)}}}};
  files["segments.json"] = maps.dump() + "\n";
  return files;
}

}  // namespace headroom::report
