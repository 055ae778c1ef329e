#include "sim/report/chart_series.hpp"

#include <algorithm>
#include <cmath>

namespace headroom::report {

nlohmann::json number_array(const std::vector<double>& values) {
  nlohmann::json a = nlohmann::json::array();
  for (double v : values) a.push_back(std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v));
  return a;
}

nlohmann::json named_series(const std::string& name, const std::vector<double>& values) {
  const bool constant = !values.empty() && !std::isnan(values.front()) &&
                        std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); });
  if (constant) return {{"name", name}, {"constant", values.front()}};
  return {{"name", name}, {"values", number_array(values)}};
}

nlohmann::json cdf_points(std::vector<double> values, std::size_t max_points) {
  std::erase_if(values, [](double v) { return std::isnan(v); });
  std::sort(values.begin(), values.end());
  nlohmann::json x = nlohmann::json::array(), p = nlohmann::json::array();
  const std::size_t n = values.size();
  const std::size_t k = std::min(n, std::max<std::size_t>(max_points, 2));
  for (std::size_t i = 0; i < k; ++i) {
    // Rank r (0-based) of the i-th kept point: evenly spaced from the first to the last.
    const std::size_t r = k == n ? i : (k == 1 ? 0 : i * (n - 1) / (k - 1));
    x.push_back(values[r]);
    p.push_back(static_cast<double>(r + 1) / static_cast<double>(n));
  }
  return {{"x", x}, {"p", p}};
}

nlohmann::json xy_points(const std::vector<double>& xs, const std::vector<double>& ys) {
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < std::min(xs.size(), ys.size()); ++i)
    if (!std::isnan(xs[i]) && !std::isnan(ys[i])) kept.push_back(i);
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const double y = ys[kept[k]];
    const bool inside_flat_run = k > 0 && k + 1 < kept.size() && ys[kept[k - 1]] == y && ys[kept[k + 1]] == y;
    if (!inside_flat_run) points.push_back({xs[kept[k]], y});
  }
  return points;
}

}  // namespace headroom::report
