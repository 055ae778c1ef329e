#pragma once
// The report page (sim/report/html_report.hpp) of a `headroom run`, built from the files the run
// saves in its output folder alone (summary.json, timeline.csv, scenario.resolved.yaml; the latency
// CDFs are summary.json's, so requests.csv, one row per request, is never read back), so
// `headroom report DIR` rebuilds the same report.html later.
// Views: memory by category over time with capacity, the engine's budget and OOM events; fragmentation;
// load; TTFT, TPOT and e2e CDFs. The time charts share one zoom.
#include <nlohmann/json.hpp>

#include "sim/report/output_files.hpp"

namespace headroom::report {

// Points per latency CDF: enough for a smooth curve, few enough to keep the page small.
inline constexpr std::size_t kCdfPoints = 500;

// Throws InputError naming the file when an output is missing or malformed.
nlohmann::json run_report_page(const OutputFolder& dir);

}  // namespace headroom::report
