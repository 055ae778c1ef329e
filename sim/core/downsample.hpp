#pragma once
// Down-sampling a time series for reports: the points are cut into max_points / 2 buckets and each
// bucket keeps its smallest and largest point by `value`, in time order, so peaks survive.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace headroom {

template <class Point, class Value>
void downsample_keeping_extremes(std::vector<Point>& points, std::size_t max_points, Value value) {
  if (points.size() <= max_points || max_points < 4) return;
  const std::size_t buckets = max_points / 2;
  std::vector<Point> out;
  out.reserve(max_points);
  for (std::size_t b = 0; b < buckets; ++b) {
    std::size_t lo = points.size() * b / buckets, hi = points.size() * (b + 1) / buckets;
    if (lo >= hi) continue;
    auto [mn, mx] = std::minmax_element(points.begin() + static_cast<std::ptrdiff_t>(lo),
                                        points.begin() + static_cast<std::ptrdiff_t>(hi),
                                        [&](const Point& x, const Point& y) { return value(x) < value(y); });
    auto first = mn < mx ? mn : mx, second = mn < mx ? mx : mn;
    out.push_back(*first);
    if (second != first) out.push_back(*second);
  }
  points = std::move(out);
}

}  // namespace headroom
