#include <catch2/catch.hpp>

#include <vector>

#include "sim/report/percentiles.hpp"

using namespace headroom::report;

TEST_CASE("percentiles interpolate linearly between order statistics (numpy's default)") {
  std::vector<double> v{4, 1, 3, 2, 5};
  Distribution d = summarize(v);
  CHECK(d.count == 5);
  CHECK(d.mean == 3.0);
  CHECK(d.p50 == 3.0);
  CHECK(d.p90 == Approx(4.6));   // numpy.percentile([1..5], 90) = 4.6
  CHECK(d.p99 == Approx(4.96));
  CHECK(d.max == 5.0);
  std::vector<double> empty;
  CHECK(summarize(empty).count == 0);
  std::vector<double> one{7};
  CHECK(summarize(one).p99 == 7.0);
}
