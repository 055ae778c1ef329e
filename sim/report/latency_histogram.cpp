#include "sim/report/latency_histogram.hpp"

#include <algorithm>
#include <cmath>

namespace headroom::report {

namespace {

constexpr double kGamma = (1 + LatencyHistogram::kRelativeError) / (1 - LatencyHistogram::kRelativeError);

}  // namespace

LatencyHistogram::LatencyHistogram()
    : log_gamma_(std::log(kGamma)), min_index_(static_cast<std::int64_t>(std::ceil(std::log(kMinValue) / log_gamma_))) {
  const auto max_index = static_cast<std::int64_t>(std::ceil(std::log(kMaxValue) / log_gamma_));
  counts_.assign(static_cast<std::size_t>(max_index - min_index_ + 2), 0);
}

std::size_t LatencyHistogram::bucket_of(double v) const {
  if (!(v >= kMinValue)) return 0;
  const double clamped = std::min(v, kMaxValue);
  const auto k = static_cast<std::int64_t>(std::ceil(std::log(clamped) / log_gamma_));
  const auto b = static_cast<std::size_t>(std::max<std::int64_t>(k - min_index_ + 1, 1));
  return std::min(b, counts_.size() - 1);
}

double LatencyHistogram::bucket_value(std::size_t b) const {
  if (b == 0) return min_;
  const double k = static_cast<double>(static_cast<std::int64_t>(b) - 1 + min_index_);
  return 2 * std::exp(k * log_gamma_) / (kGamma + 1);
}

void LatencyHistogram::add(double v) {
  if (count_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  ++count_;
  ++counts_[bucket_of(v)];
  // Neumaier's compensated summation: the mean does not drift over ten million requests.
  const double t = sum_ + v;
  sum_compensation_ += std::abs(sum_) >= std::abs(v) ? (sum_ - t) + v : (v - t) + sum_;
  sum_ = t;
}

double LatencyHistogram::order_statistic(std::int64_t r) const {
  if (count_ == 0) return 0;
  if (r <= 0) return min_;
  if (r >= count_ - 1) return max_;
  std::int64_t seen = 0;
  for (std::size_t b = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen > r) return std::clamp(bucket_value(b), min_, max_);
  }
  return max_;
}

double LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const double pos = q * static_cast<double>(count_ - 1);
  const auto lo = static_cast<std::int64_t>(std::floor(pos));
  const std::int64_t hi = std::min(lo + 1, count_ - 1);
  const double frac = pos - static_cast<double>(lo);
  const double a = order_statistic(lo), b = order_statistic(hi);
  return a + (b - a) * frac;
}

Distribution LatencyHistogram::summary() const {
  Distribution d;
  if (count_ == 0) return d;
  d.count = count_;
  d.mean = (sum_ + sum_compensation_) / static_cast<double>(count_);
  d.p50 = quantile(0.50);
  d.p90 = quantile(0.90);
  d.p99 = quantile(0.99);
  d.max = max_;
  return d;
}

std::vector<std::pair<double, double>> LatencyHistogram::cdf(std::size_t max_points) const {
  std::vector<std::pair<double, double>> out;
  if (count_ == 0) return out;
  const auto n = static_cast<std::size_t>(count_);
  const std::size_t k = std::min(n, std::max<std::size_t>(max_points, 2));
  out.reserve(k);
  // Ranks increase, so one walk over the buckets serves them all.
  std::size_t b = 0;
  std::int64_t seen = counts_[0];
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t r = k == n ? i : (k == 1 ? 0 : i * (n - 1) / (k - 1));
    double x;
    if (r == 0) {
      x = min_;
    } else if (r == n - 1) {
      x = max_;
    } else {
      while (seen <= static_cast<std::int64_t>(r)) seen += counts_[++b];
      x = std::clamp(bucket_value(b), min_, max_);
    }
    out.emplace_back(x, static_cast<double>(r + 1) / static_cast<double>(n));
  }
  return out;
}

}  // namespace headroom::report
