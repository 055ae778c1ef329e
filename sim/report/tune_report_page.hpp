#pragma once
// The report page (sim/report/html_report.hpp) of `headroom tune`, built from the files it saves in its
// output folder alone (tune.json, scenario.resolved.yaml), so `headroom report DIR` rebuilds the same
// report.html later. Views: the frontier (knob value → KV tokens, the failing values shaded, TTFT
// p99 on a second axis, the best value marked) and every grid point in a table.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/output_files.hpp"

namespace headroom::report {

// The verdict in one sentence: the best value with its KV tokens and the first failing one with why,
// or that every value failed.
std::string tune_verdict(const nlohmann::json& tune, const std::string& file);

// The shaded stretches of the frontier: each run of consecutive failing grid values, widened by half
// a step on each side (where the boundary lies between two grid points), clipped to the grid's ends.
std::vector<std::pair<double, double>> failing_regions(const std::vector<double>& values, const std::vector<bool>& failed,
                                                        double step);

// Throws InputError naming the file when an output is missing or malformed.
nlohmann::json tune_report_page(const OutputFolder& dir);

}  // namespace headroom::report
