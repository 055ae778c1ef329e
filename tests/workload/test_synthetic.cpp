// Synthetic arrivals and lengths: rates, CVs, burst structure, moments and determinism.
#include <catch2/catch.hpp>

#include <cmath>
#include <initializer_list>
#include <memory>

#include "sim/core/error.hpp"
#include "sim/workload/file_lengths.hpp"
#include "sim/workload/fixed_length.hpp"
#include "sim/workload/gamma_arrivals.hpp"
#include "sim/workload/independent_lengths.hpp"
#include "sim/workload/lognormal_length.hpp"
#include "sim/workload/on_off_arrivals.hpp"
#include "sim/workload/poisson_arrivals.hpp"
#include "sim/workload/summary.hpp"
#include "sim/workload/synthetic_source.hpp"
#include "sim/workload/uniform_length.hpp"
#include "sim/workload/zipf_length.hpp"
#include "tests/support/test_data.hpp"
#include "tests/workload/test_files.hpp"

using namespace headroom;
using namespace headroom::workload;
using headroom::workload::test::drain;

namespace {

std::unique_ptr<LengthModel> fixed_lengths(Tokens in, Tokens out) {
  return std::make_unique<IndependentLengths>(std::make_unique<FixedLength>(in), std::make_unique<FixedLength>(out));
}

SyntheticSource source(std::unique_ptr<ArrivalProcess> a, std::uint64_t requests, std::uint64_t seed = 1,
                       std::unique_ptr<LengthModel> lengths = nullptr) {
  return SyntheticSource(std::move(a), lengths ? std::move(lengths) : fixed_lengths(100, 10),
                         SyntheticLimits{requests, std::nullopt}, seed);
}

struct Moments {
  double mean = 0, var = 0;
};
Moments moments(const LengthDistribution& d, int n = 1'000'000, std::uint64_t seed = 5) {
  Rng rng(seed);
  double mean = 0, m2 = 0;
  for (int i = 1; i <= n; ++i) {
    const double x = static_cast<double>(d.sample(rng));
    const double delta = x - mean;
    mean += delta / i;
    m2 += delta * (x - mean);
  }
  return {mean, m2 / (n - 1)};
}

}  // namespace

TEST_CASE("Poisson arrivals have the asked rate and CV 1") {
  auto s = source(std::make_unique<PoissonArrivals>(10.0), 200'000);
  const Summary sum = summarize(s);
  CHECK(sum.count == 200'000);
  CHECK(sum.first_arrival_s == 0.0);
  CHECK(sum.rate_per_s == Approx(10.0).epsilon(0.01));
  CHECK(sum.interarrival_cv == Approx(1.0).epsilon(0.01));
  CHECK(sum.input.mean == 100);
  CHECK(sum.output.max == 10);
}

TEST_CASE("Gamma arrivals have the asked rate and CV") {
  for (double cv : {0.5, 1.0, 3.0, 13.15}) {
    INFO("cv " << cv);
    auto s = source(std::make_unique<GammaArrivals>(5.0, cv), 300'000);
    const Summary sum = summarize(s);
    CHECK(sum.rate_per_s == Approx(5.0).epsilon(0.03));
    CHECK(sum.interarrival_cv == Approx(cv).epsilon(0.03));
  }
}

TEST_CASE("on/off arrivals come only in the on periods at the asked rate") {
  // 2 s bursts at 50 req/s, then 8 s of silence: 100 requests per 10 s cycle on average.
  SyntheticSource s(std::make_unique<OnOffArrivals>(50.0, 2.0, 8.0), fixed_lengths(10, 10),
                    SyntheticLimits{std::nullopt, 10'000.0}, 3);
  const auto rs = drain(s);
  bool all_in_on_periods = true;
  std::vector<int> per_cycle(1000, 0);
  for (const auto& r : rs) {
    const double phase = std::fmod(r.arrival_s, 10.0);
    all_in_on_periods &= phase < 2.0;
    ++per_cycle[static_cast<std::size_t>(r.arrival_s / 10.0)];
  }
  CHECK(all_in_on_periods);
  CHECK(rs.front().arrival_s == 0.0);
  CHECK(rs.back().arrival_s < 10'000.0);
  // 1,000 cycles of Poisson(100): total 100,000 +- 3 standard deviations (about 950).
  CHECK(std::fabs(static_cast<double>(rs.size()) - 100'000.0) < 950.0);
  int empty_cycles = 0;
  for (int c : per_cycle) empty_cycles += c == 0;
  CHECK(empty_cycles == 0);
  // The clock on which the Poisson process runs is on-time only: the gaps within a burst have
  // mean 1/50 s.
  double within = 0;
  int gaps = 0;
  for (std::size_t i = 1; i < rs.size(); ++i) {
    if (std::floor(rs[i].arrival_s / 10.0) == std::floor(rs[i - 1].arrival_s / 10.0)) {
      within += rs[i].arrival_s - rs[i - 1].arrival_s;
      ++gaps;
    }
  }
  CHECK(within / gaps == Approx(0.02).epsilon(0.02));
}

TEST_CASE("length distributions have the right moments") {
  const FixedLength fixed(7);
  Rng rng(1);
  CHECK(fixed.sample(rng) == 7);

  const auto u = moments(UniformLength(10, 20));
  CHECK(u.mean == Approx(15.0).epsilon(0.002));
  CHECK(u.var == Approx((11.0 * 11.0 - 1) / 12).epsilon(0.01));  // discrete uniform on n = 11 values

  // Wide bounds so clamping and rounding hardly matter.
  const auto l = moments(LognormalLength(2000.0, 0.8, 1, 1'000'000));
  CHECK(l.mean == Approx(2000.0).epsilon(0.005));
  CHECK(std::sqrt(l.var) / l.mean == Approx(0.8).epsilon(0.02));
  // Clamping: everything lands inside [min, max].
  const LognormalLength clamped(500.0, 2.0, 100, 600);
  Rng r2(9);
  bool inside = true;
  for (int i = 0; i < 100'000; ++i) {
    const Tokens t = clamped.sample(r2);
    inside &= t >= 100 && t <= 600;
  }
  CHECK(inside);

  // Zipf on 5..1004 with exponent 1.2: exact mean from the pmf.
  double norm = 0, first = 0;
  for (int k = 1; k <= 1000; ++k) {
    const double p = std::pow(k, -1.2);
    norm += p;
    first += (k + 4) * p;
  }
  const auto z = moments(ZipfLength(5, 1004, 1.2));
  CHECK(z.mean == Approx(first / norm).epsilon(0.01));
}

TEST_CASE("the same seed gives the same workload, another seed another one") {
  auto make = [](std::uint64_t seed, Tokens output_max) {
    return SyntheticSource(std::make_unique<GammaArrivals>(4.0, 2.0),
                           std::make_unique<IndependentLengths>(std::make_unique<LognormalLength>(1000.0, 1.0, 1, 100'000),
                                                                std::make_unique<UniformLength>(1, output_max)),
                           SyntheticLimits{5'000, std::nullopt}, seed);
  };
  auto a = make(42, 500), b = make(42, 500), c = make(43, 500), d = make(42, 900);
  const auto ra = drain(a), rb = drain(b), rc = drain(c), rd = drain(d);
  REQUIRE(ra.size() == 5'000);
  bool same = true, differs = false, arrivals_kept = true, lengths_changed = false;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    same &= ra[i].arrival_s == rb[i].arrival_s && ra[i].input_tokens == rb[i].input_tokens &&
            ra[i].output_tokens == rb[i].output_tokens && ra[i].id == rb[i].id;
    differs |= ra[i].arrival_s != rc[i].arrival_s;
    // Arrivals and lengths draw from separate streams: changing the output distribution leaves
    // the arrival times alone.
    arrivals_kept &= ra[i].arrival_s == rd[i].arrival_s && ra[i].input_tokens == rd[i].input_tokens;
    lengths_changed |= ra[i].output_tokens != rd[i].output_tokens;
  }
  CHECK(same);
  CHECK(differs);
  CHECK(arrivals_kept);
  CHECK(lengths_changed);
}

TEST_CASE("lengths from a length-only file, in order and sampled") {
  const auto file = headroom::test::data_file("sharegpt_8k_filtered_stats_llama2_tokenizer.csv");
  // In order: the whole file once, then the source ends (no other limit needed).
  SyntheticSource seq(std::make_unique<PoissonArrivals>(2.0), std::make_unique<FileLengths>(file, LengthOrder::sequential),
                      SyntheticLimits{}, 7);
  const Summary s = summarize(seq);
  CHECK(s.count == 30'731);
  CHECK(s.input.mean == Approx(2340.03).margin(0.01));
  CHECK(s.output.mean == Approx(438.71).margin(0.01));
  CHECK(s.rate_per_s == Approx(2.0).epsilon(0.03));
  CHECK(seq.stats().rows == 30'731);

  // Sampled with replacement: the same means, within sampling error.
  SyntheticSource sampled(std::make_unique<PoissonArrivals>(2.0), std::make_unique<FileLengths>(file, LengthOrder::sample),
                          SyntheticLimits{200'000, std::nullopt}, 7);
  const Summary t = summarize(sampled);
  CHECK(t.count == 200'000);
  CHECK(t.input.mean == Approx(2340.03).epsilon(0.01));
  CHECK(t.output.mean == Approx(438.71).epsilon(0.01));
  CHECK(t.input.max <= 8141);
}

TEST_CASE("synthetic parameters out of range are input errors") {
  CHECK_THROWS_WITH(PoissonArrivals(0.0),
                    "poisson arrivals: rate must be a positive number of requests per second, got 0");
  CHECK_THROWS_WITH(GammaArrivals(2.0, -1.5), "gamma arrivals: cv must be a positive number, got -1.5");
  CHECK_THROWS_WITH(OnOffArrivals(2.0, 0.0, 1.0), "on_off arrivals: on_s must be a positive number of seconds, got 0");
  CHECK_THROWS_WITH(OnOffArrivals(2.0, 1.0, -1.0),
                    "on_off arrivals: off_s must be a non-negative number of seconds, got -1");
  CHECK_THROWS_WITH(FixedLength(0), "fixed length: value must be between 1 and 1000000000 tokens, got 0");
  CHECK_THROWS_WITH(UniformLength(10, 5), "uniform length: needs 1 <= min <= max <= 1000000000, got min 10, max 5");
  CHECK_THROWS_WITH(LognormalLength(-3.0, 1.0, 1, 10), "lognormal length: mean must be a positive number of tokens, got -3");
  CHECK_THROWS_WITH(ZipfLength(1, 100, 0.0), "zipf length: exponent must be a positive number, got 0");
  CHECK_THROWS_WITH(SyntheticSource(std::make_unique<PoissonArrivals>(1.0), fixed_lengths(1, 1), SyntheticLimits{}, 1),
                    "synthetic workload: give requests or duration_s (or lengths from a file in sequential order), "
                    "otherwise it never ends");
  CHECK_THROWS_WITH(
      SyntheticSource(std::make_unique<PoissonArrivals>(1.0), fixed_lengths(1, 1), SyntheticLimits{std::nullopt, -5.0}, 1),
      "synthetic workload: duration_s must be a positive number of seconds, got -5");
}
