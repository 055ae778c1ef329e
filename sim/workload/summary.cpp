#include "sim/workload/summary.hpp"

#include <algorithm>
#include <cmath>

namespace headroom::workload {

double percentile(const std::vector<Tokens>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = static_cast<std::size_t>(std::ceil(rank));
  const double a = static_cast<double>(sorted[lo]), b = static_cast<double>(sorted[hi]);
  return a + (b - a) * (rank - static_cast<double>(lo));
}

namespace {

LengthSummary lengths(std::vector<Tokens>& v) {
  LengthSummary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (Tokens t : v) sum += static_cast<double>(t);
  s.mean = sum / static_cast<double>(v.size());
  s.p50 = percentile(v, 0.50);
  s.p90 = percentile(v, 0.90);
  s.p99 = percentile(v, 0.99);
  s.min = v.front();
  s.max = v.back();
  return s;
}

}  // namespace

Summary summarize(RequestSource& source) {
  Summary s;
  std::vector<Tokens> in, out;
  Request r;
  double gap_mean = 0, gap_m2 = 0, prev = 0;  // Welford over inter-arrival gaps
  std::uint64_t gaps = 0;
  while (source.next(r)) {
    if (s.count == 0) {
      s.first_arrival_s = r.arrival_s;
    } else {
      const double gap = r.arrival_s - prev;
      ++gaps;
      const double d = gap - gap_mean;
      gap_mean += d / static_cast<double>(gaps);
      gap_m2 += d * (gap - gap_mean);
    }
    prev = r.arrival_s;
    ++s.count;
    in.push_back(r.input_tokens);
    out.push_back(r.output_tokens);
  }
  s.last_arrival_s = prev;
  s.span_s = s.last_arrival_s - s.first_arrival_s;
  if (s.span_s > 0) s.rate_per_s = static_cast<double>(s.count - 1) / s.span_s;
  if (gaps > 0 && gap_mean > 0) s.interarrival_cv = std::sqrt(gap_m2 / static_cast<double>(gaps)) / gap_mean;
  s.input = lengths(in);
  s.output = lengths(out);
  return s;
}

}  // namespace headroom::workload
