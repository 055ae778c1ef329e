#pragma once
// Summary statistics of a workload, with the definitions of docs/workloads.md:
// percentiles by linear interpolation between order statistics, rate = (count - 1) / span.
#include <cstdint>
#include <vector>

#include "sim/workload/request_source.hpp"

namespace headroom::workload {

struct LengthSummary {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
  Tokens min = 0, max = 0;
};

struct Summary {
  std::uint64_t count = 0;
  double first_arrival_s = 0, last_arrival_s = 0;
  double span_s = 0;            // last - first arrival
  double rate_per_s = 0;        // (count - 1) / span; 0 when the span is 0
  double interarrival_cv = 0;   // population standard deviation of the gaps / their mean
  LengthSummary input, output;
};

// Percentile p in [0, 1] of values sorted ascending: linear interpolation at rank p * (n - 1).
double percentile(const std::vector<Tokens>& sorted, double p);

// Drains `source`. Holds two numbers per request to take percentiles (a summary is for reports
// and tests, not for the simulation's streaming path).
Summary summarize(RequestSource& source);

}  // namespace headroom::workload
