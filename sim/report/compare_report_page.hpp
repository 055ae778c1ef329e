#pragma once
// The report page (sim/report/html_report.hpp) of `headroom compare`, built from the files it saves in
// its output folder alone (comparison.json, timeline.NN.<policy>.csv per started policy,
// scenario.resolved.yaml), so `headroom report DIR` rebuilds the same report.html later.
// Views: one row per policy side by side (start-up, KV tokens, outcome, OOMs, latency); KV tokens
// per policy coloured by whether it ran out of memory; TTFT and TPOT p99 per policy; every started
// policy's reserved memory over time on one chart, with the device's capacity and each first OOM.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/output_files.hpp"

namespace headroom::report {

// The verdict in one sentence, from comparison.json's rows: how many policies serve without running
// out of memory, the baseline's (first row's) outcome when it does, and the survivor keeping the most
// KV tokens with what it gives up. `file` names comparison.json in errors.
std::string compare_verdict(const nlohmann::json& comparison, const std::string& file);

// Throws InputError naming the file when an output is missing or malformed.
nlohmann::json compare_report_page(const OutputFolder& dir);

}  // namespace headroom::report
