#pragma once
// Series shaped for the report's charts (web/report.js): bounded in size whatever the run's length,
// so report.html stays small, and exact where it matters (peaks, the tail of a distribution).
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::report {

// {"name": name, "values": [...]} with NaN as null, or {"name": name, "constant": v} when every value
// is the same (fixed start-up categories: one number instead of thousands).
nlohmann::json named_series(const std::string& name, const std::vector<double>& values);

// The empirical CDF of `values` (NaNs dropped) as {"x": [...], "p": [...]}: every sorted value with
// p = rank / n when there are at most max_points of them, else max_points values at evenly spaced
// ranks, the smallest and the largest always included (so the tail's end is exact).
nlohmann::json cdf_points(std::vector<double> values, std::size_t max_points);

// [[x, y], ...] for a line over its own x values (one policy's timeline among others): rows with a NaN
// are left out, and so is every point inside a run of equal y values but the run's first and last,
// which draws the same line (flat stretches of reserved memory cost two points, not thousands).
nlohmann::json xy_points(const std::vector<double>& xs, const std::vector<double>& ys);

// Numbers as a JSON array, NaN as null.
nlohmann::json number_array(const std::vector<double>& values);

}  // namespace headroom::report
