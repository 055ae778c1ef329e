#pragma once
// What `headroom replay` writes: the result as JSON (what --json prints), the fragmentation timeline
// CSV (--timeline), and with -o DIR an output folder holding replay.json, timeline.csv,
// what_if_timeline.csv (with --what-if) and segments.json (the segment maps at the peak of reserved
// memory and at the end), from which report.html is built (sim/report/replay_report_page.hpp).
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/allocator/replay.hpp"
#include "sim/core/text_writer.hpp"

namespace headroom::report {

// One replay's figures (docs/replay-and-allocator.md, --json).
nlohmann::json replay_report_json(const alloc::ReplayReport& r);

// The whole result: the faithful replay, `snapshot` (the path as given) and the what-if rows (the
// recorded configuration first) with the capacity they ran on.
nlohmann::json replay_result_json(const std::string& snapshot, const alloc::ReplayReport& faithful,
                                  const std::vector<alloc::ReplayReport>& what_if, std::optional<Bytes> capacity);

// event_index,time_us,allocated_bytes,reserved_bytes,reserved_unallocated_bytes,largest_free_block_bytes,free_blocks
void write_replay_timeline_csv(TextWriter& out, const std::vector<alloc::ReplayPoint>& timeline);
void write_replay_timeline_csv(std::ostream& out, const std::vector<alloc::ReplayPoint>& timeline);

// The what-if runs' timelines in one file: the same columns after a `configuration` column (the
// row's index in replay.json's what_if).
void write_what_if_timeline_csv(TextWriter& out, const std::vector<alloc::ReplayReport>& what_if);

// Segments (address order) with their blocks as [offset from the segment's start, size, requested
// size, state] where state is 0 allocated, 1 freed but pending stream events, 2 free (inactive).
nlohmann::json segments_json(const std::vector<alloc::SnapshotSegment>& segments);

// The texts of replay.json, timeline.csv, segments.json and, with what-if rows, what_if_timeline.csv,
// by file name, for `headroom replay -o DIR` to write (and draw its report from) all at once.
// `faithful` must come from a replay with keep_segments_at_peak.
std::map<std::string, std::string> replay_output_files(const nlohmann::json& result, const alloc::ReplayReport& faithful,
                                                       const std::vector<alloc::ReplayReport>& what_if);

}  // namespace headroom::report
