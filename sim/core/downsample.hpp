#pragma once
// Down-sampling a time series for reports: the points are cut into max_points / 2 buckets and each
// bucket keeps its smallest and largest point by `value`, in time order, so peaks survive.
// StreamingDownsample does the same while the points stream in, in bounded memory.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <utility>
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

// A series too long to hold (one point per engine step of a ten-million-request trace) kept in
// memory bounded by `max_buckets`: points fill buckets of `width` consecutive points, each bucket
// keeping its smallest and largest point by `value` (the first smallest, the last largest, as
// std::minmax_element picks them), in time order; when max_buckets buckets are full, neighbours
// merge pairwise and the width doubles. Buckets of 1 or 2 points keep every point, so a series of
// fewer than 2 × max_buckets points comes out whole, and take() then equals
// downsample_keeping_extremes on the whole series. Longer series lose only points that were
// neither the smallest nor the largest of their bucket, so the series' extremes always survive.
template <class Point, class Value>
class StreamingDownsample {
 public:
  StreamingDownsample(std::size_t max_buckets, Value value) : max_buckets_(max_buckets), value_(std::move(value)) {
    if (max_buckets_ < 2 || max_buckets_ % 2 != 0) throw std::logic_error("StreamingDownsample: max_buckets must be even, >= 2");
    buckets_.reserve(max_buckets_);
  }

  void add(const Point& p) {
    // The open bucket keeps its first smallest and last largest point and their places, which is
    // what merging the points one by one would keep; a point is copied only when it is one of them.
    const auto v = value_(p);
    if (open_count_ == 0 || v < open_min_value_) {
      open_min_ = p;
      open_min_value_ = v;
      open_min_at_ = open_count_;
    }
    if (open_count_ == 0 || !(v < open_max_value_)) {
      open_max_ = p;
      open_max_value_ = v;
      open_max_at_ = open_count_;
    }
    if (++open_count_ < width_) return;
    buckets_.push_back(open_bucket());
    open_count_ = 0;
    if (buckets_.size() == max_buckets_) {
      for (std::size_t i = 0; i < max_buckets_ / 2; ++i) buckets_[i] = merged(buckets_[2 * i], buckets_[2 * i + 1]);
      buckets_.resize(max_buckets_ / 2);
      width_ *= 2;
    }
  }

  // The points kept, in time order, down-sampled to at most max_points (downsample_keeping_extremes).
  std::vector<Point> take(std::size_t max_points) const {
    std::vector<Point> out;
    out.reserve(2 * buckets_.size() + 2);
    auto emit = [&](const Bucket& b) {
      out.push_back(b.first);
      if (b.two) out.push_back(b.second);
    };
    for (const Bucket& b : buckets_) emit(b);
    if (open_count_ > 0) emit(open_bucket());
    downsample_keeping_extremes(out, max_points, value_);
    return out;
  }

  std::size_t width() const { return width_; }

 private:
  // One point (two == false: first), or the bucket's extremes in time order.
  struct Bucket {
    Point first, second;
    bool two = false;
  };
  // The open bucket's extremes in time order.
  Bucket open_bucket() const {
    if (open_min_at_ == open_max_at_) return Bucket{open_min_, open_min_, false};
    return open_min_at_ < open_max_at_ ? Bucket{open_min_, open_max_, true} : Bucket{open_max_, open_min_, true};
  }
  // The extremes of two neighbouring buckets (x before y), as minmax_element over their points.
  Bucket merged(const Bucket& x, const Bucket& y) const {
    const Point* pts[4];
    std::size_t n = 0;
    pts[n++] = &x.first;
    if (x.two) pts[n++] = &x.second;
    pts[n++] = &y.first;
    if (y.two) pts[n++] = &y.second;
    std::size_t mn = 0, mx = 0;
    for (std::size_t i = 1; i < n; ++i) {
      if (value_(*pts[i]) < value_(*pts[mn])) mn = i;
      if (!(value_(*pts[i]) < value_(*pts[mx]))) mx = i;
    }
    if (mn == mx) return Bucket{*pts[mn], *pts[mn], false};
    return mn < mx ? Bucket{*pts[mn], *pts[mx], true} : Bucket{*pts[mx], *pts[mn], true};
  }

  std::size_t max_buckets_;
  Value value_;
  std::vector<Bucket> buckets_;
  using ValueType = std::decay_t<std::invoke_result_t<const Value&, const Point&>>;
  // The open bucket: its first smallest and last largest point, their values and places in it.
  Point open_min_{}, open_max_{};
  ValueType open_min_value_{}, open_max_value_{};
  std::size_t open_min_at_ = 0, open_max_at_ = 0;
  std::size_t open_count_ = 0;
  std::size_t width_ = 1;
};

}  // namespace headroom
