// Down-sampling the timeline: streamed through a bounded number of buckets, a series shorter than
// twice that number comes out exactly as down-sampling the whole series would; a longer one keeps
// its extremes and stays within the bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/core/downsample.hpp"

using namespace headroom;

namespace {
struct P {
  int t = 0;
  std::int64_t v = 0;
  bool operator==(const P&) const = default;
};
auto value = [](const P& p) { return p.v; };
}  // namespace

TEST_CASE("streaming downsample: equals the whole-series one below twice its buckets") {
  std::mt19937_64 gen(3);
  for (std::size_t n : {0u, 1u, 5u, 63u, 64u, 127u, 500u}) {
    std::vector<P> all;
    StreamingDownsample<P, decltype(value)> s(64, value);
    for (std::size_t i = 0; i < n; ++i) {
      const P p{static_cast<int>(i), static_cast<std::int64_t>(gen() % 1000)};
      all.push_back(p);
      s.add(p);
    }
    INFO("n " << n);
    std::vector<P> expected = all;
    downsample_keeping_extremes(expected, 40, value);
    if (n < 128) CHECK(s.take(40) == expected);
    // Longer: at most 40 points, in time order, and the series' smallest and largest survive.
    const std::vector<P> got = s.take(40);
    CHECK(got.size() <= 40);
    CHECK(std::is_sorted(got.begin(), got.end(), [](const P& a, const P& b) { return a.t < b.t; }));
    if (n > 0) {
      // Plain variables, not a structured binding: clang 14 cannot capture those in a lambda.
      const auto extremes = std::minmax_element(all.begin(), all.end(), [](const P& a, const P& b) { return a.v < b.v; });
      const std::int64_t lo = extremes.first->v, hi = extremes.second->v;
      CHECK(std::any_of(got.begin(), got.end(), [&](const P& p) { return p.v == lo; }));
      CHECK(std::any_of(got.begin(), got.end(), [&](const P& p) { return p.v == hi; }));
    }
  }
}

TEST_CASE("streaming downsample: a million points in 64 buckets keep a late spike") {
  StreamingDownsample<P, decltype(value)> s(64, value);
  for (int i = 0; i < 1'000'000; ++i) s.add(P{i, i == 987'654 ? 5000 : i % 100});
  CHECK(s.width() >= 1'000'000 / 64);
  const std::vector<P> got = s.take(1000);
  CHECK(got.size() <= 128);
  CHECK(std::count(got.begin(), got.end(), P{987'654, 5000}) == 1);
}

TEST_CASE("streaming downsample: ties keep the first smallest and the last largest, as the whole series") {
  // Three values only: most points tie with a bucket's extremes.
  std::mt19937_64 gen(5);
  for (std::size_t n : {2u, 3u, 64u, 100u, 127u}) {
    std::vector<P> all;
    StreamingDownsample<P, decltype(value)> s(64, value);
    for (std::size_t i = 0; i < n; ++i) {
      const P p{static_cast<int>(i), static_cast<std::int64_t>(gen() % 3)};
      all.push_back(p);
      s.add(p);
    }
    INFO("n " << n);
    std::vector<P> expected = all;
    downsample_keeping_extremes(expected, 40, value);
    CHECK(s.take(40) == expected);
    CHECK(s.take(1000) == all);  // below twice the buckets nothing is dropped
  }
}
