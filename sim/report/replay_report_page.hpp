#pragma once
// The report page (sim/report/html_report.hpp) of a `headroom replay -o DIR`, built from the files
// in DIR alone (replay.json, timeline.csv, segments.json, what_if_timeline.csv), so
// `headroom report DIR` rebuilds the same report.html later.
// Views: memory (allocated and cached-but-free) and fragmentation over the trace; the segment maps at
// the peak of reserved memory and at the end (blocks coloured by state); with --what-if, the
// configurations side by side (peaks, fragmentation, cudaMalloc calls, OOMs) and their reserved
// memory over the same request stream.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/output_files.hpp"

namespace headroom::report {

// Blocks drawn per segment map at most: beyond it, neighbouring blocks of the same state in a segment
// are drawn as one (the colours, hence the map, are unchanged; the tooltip says how many were merged).
inline constexpr std::size_t kSegmentMapBlocks = 20000;

// One sentence: how faithfully the model reproduced the recording, and what the what-ifs change.
std::string replay_verdict(const nlohmann::json& replay);

// Throws InputError naming the file when an output is missing or malformed.
nlohmann::json replay_report_page(const OutputFolder& dir);

}  // namespace headroom::report
