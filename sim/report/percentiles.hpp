#pragma once
// Latency distributions as the run report states them: count, mean and percentiles by linear
// interpolation between order statistics (numpy's default), over the finished requests. A run
// collects them in a LatencyHistogram (latency_histogram.hpp, within 0.5 % of these exact ones);
// summarize() computes them exactly from every value, for tests and small lists.
#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::report {

struct Distribution {
  std::int64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  // (value, fraction at or below it), for the report's CDF chart; empty unless a histogram filled it.
  std::vector<std::pair<double, double>> cdf;
};

// A statistic of `d` (d.p50, d.p99...) as written to JSON: null when the distribution has no sample,
// so that a run that completed nothing never reads as "TTFT 0 s" (CSV: empty; tables: "-").
nlohmann::json statistic_json(const Distribution& d, double value);

// `values` is sorted in place. Empty input gives count 0 and zeros.
Distribution summarize(std::vector<double>& values);

// The q-quantile (0..1) of sorted values, linearly interpolated.
double quantile_sorted(const std::vector<double>& sorted, double q);

}  // namespace headroom::report
