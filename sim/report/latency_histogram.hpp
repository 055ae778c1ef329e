#pragma once
// A latency distribution in fixed memory, however many requests a trace holds: a histogram over
// logarithmic buckets (the index mapping of DDSketch: Masson, Rim & Lee, "DDSketch: a fast and
// fully-mergeable quantile sketch with relative-error guarantees", VLDB 2019). No Debian package
// offers one for C++ (HdrHistogram exists only for Java and Go there).
//
// A value v in [kMinValue, kMaxValue] falls in bucket k = ceil(log_γ v) with γ = (1 + α)/(1 − α),
// i.e. in (γ^(k−1), γ^k], and is estimated by 2γ^k/(γ + 1), which is within relative error α of
// every value of its bucket. An order statistic is estimated by its bucket's value, clamped to the
// exact smallest and largest values seen (the first and last order statistics are those exactly),
// and a quantile interpolates linearly between the two order statistics around q·(n − 1), as numpy
// does by default; so every percentile and CDF point is within α = 0.5 % of the exact one
// (percentiles.hpp over every value). Values under kMinValue (1 µs; 0 included) share one bucket
// whose value is the smallest seen: there the error is under 1 µs. Count, max and min are exact;
// the mean is a compensated (Neumaier) sum, exact to rounding.
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/report/percentiles.hpp"

namespace headroom::report {

class LatencyHistogram {
 public:
  static constexpr double kRelativeError = 0.005;  // α
  static constexpr double kMinValue = 1e-6;        // seconds
  static constexpr double kMaxValue = 1e7;         // seconds (116 days); larger values count as this

  LatencyHistogram();

  // Allocation-free.
  void add(double v);

  std::int64_t count() const { return count_; }
  // The order statistic of 0-based rank r < count() (estimated as above).
  double order_statistic(std::int64_t r) const;
  // The q-quantile (0..1), linearly interpolated between order statistics; 0 when empty.
  double quantile(double q) const;
  // count, mean, p50, p90, p99, max (zeros when empty).
  Distribution summary() const;
  // The CDF at up to max_points ranks evenly spaced from the first to the last: (value, fraction
  // of values at or below it) with the fraction (r + 1)/n of rank r, as chart_series' cdf_points
  // draws a sorted list.
  std::vector<std::pair<double, double>> cdf(std::size_t max_points) const;

 private:
  std::size_t bucket_of(double v) const;
  double bucket_value(std::size_t b) const;

  double log_gamma_;
  std::int64_t min_index_;  // ceil(log_γ kMinValue): bucket 1 holds it; bucket 0 the values below
  std::vector<std::int64_t> counts_;
  std::int64_t count_ = 0;
  double sum_ = 0, sum_compensation_ = 0;
  double min_ = 0, max_ = 0;
};

}  // namespace headroom::report
