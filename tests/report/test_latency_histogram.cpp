// The run's latency histogram against exact percentiles (percentiles.hpp) over every value: within
// its documented relative error on random data spanning six decades, exact count, min and max,
// the CDF at the same ranks as chart_series' cdf_points, and fixed memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sim/report/chart_series.hpp"
#include "sim/report/latency_histogram.hpp"
#include "sim/report/percentiles.hpp"

using namespace headroom::report;

TEST_CASE("latency histogram: percentiles within 0.5 % of the exact ones on random data") {
  std::mt19937_64 gen(7);
  std::lognormal_distribution<double> ttft(std::log(0.2), 1.5);  // seconds: about 1 ms to 50 s
  for (int trial = 0; trial < 4; ++trial) {
    const std::size_t n = trial == 0 ? 1 : (trial == 1 ? 7 : (trial == 2 ? 1000 : 200000));
    std::vector<double> v;
    LatencyHistogram h;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = ttft(gen) * (i % 97 == 0 ? 1e-3 : 1);  // a few values near 1 µs
      v.push_back(x);
      h.add(x);
    }
    const Distribution exact = summarize(v);  // sorts v
    const Distribution est = h.summary();
    INFO("n " << n);
    CHECK(est.count == exact.count);
    CHECK(est.max == exact.max);
    CHECK(est.mean == Approx(exact.mean).epsilon(1e-12));
    const double a = LatencyHistogram::kRelativeError;
    for (double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
      INFO("q " << q);
      const double e = quantile_sorted(v, q);
      CHECK(std::abs(h.quantile(q) - e) <= a * e + 1e-15);
    }
    CHECK(h.quantile(0) == v.front());
    CHECK(h.quantile(1) == v.back());
    // The CDF at cdf_points' ranks, each value within the bound, the fractions equal.
    const auto cdf = h.cdf(500);
    const nlohmann::json ref = cdf_points(v, 500);
    REQUIRE(cdf.size() == ref["x"].size());
    for (std::size_t i = 0; i < cdf.size(); ++i) {
      const double e = ref["x"][i].get<double>();
      CHECK(std::abs(cdf[i].first - e) <= a * e + 1e-15);
      CHECK(cdf[i].second == ref["p"][i].get<double>());
    }
  }
}

TEST_CASE("latency histogram: values under 1 µs, zero and none") {
  LatencyHistogram empty;
  CHECK(empty.summary().count == 0);
  CHECK(empty.quantile(0.5) == 0);
  CHECK(empty.cdf(10).empty());
  LatencyHistogram h;
  for (double x : {0.0, 0.0, 5e-7, 2.0}) h.add(x);
  // Ranks 0..3: 0, 0, 5e-7 (in the bucket under 1 µs, estimated by the smallest value, 0), 2.
  CHECK(h.order_statistic(0) == 0);
  CHECK(h.order_statistic(2) == 0);  // within 1 µs of 5e-7
  CHECK(h.order_statistic(3) == 2.0);
  CHECK(h.summary().mean == Approx((5e-7 + 2.0) / 4));
}
