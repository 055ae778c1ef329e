// Transformations wrapped around a source: window, rate scale, time scale, clip, max requests.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/core/error.hpp"
#include "sim/workload/clip_to_context.hpp"
#include "sim/workload/max_requests.hpp"
#include "sim/workload/open_trace.hpp"
#include "sim/workload/rate_scale.hpp"
#include "sim/workload/summary.hpp"
#include "sim/workload/time_scale.hpp"
#include "sim/workload/time_window.hpp"
#include "tests/support/test_data.hpp"
#include "tests/workload/test_files.hpp"

using namespace headroom;
using namespace headroom::workload;
using headroom::workload::test::drain;
using headroom::workload::test::ListSource;

namespace {

Request req(double t, Tokens in, Tokens out) {
  Request r;
  r.arrival_s = t;
  r.input_tokens = in;
  r.output_tokens = out;
  return r;
}

std::unique_ptr<RequestSource> list(std::vector<Request> rs) { return std::make_unique<ListSource>(std::move(rs)); }

std::unique_ptr<RequestSource> azure_conv() { return open_trace(headroom::test::data_file("azure2023_conv.csv")); }

}  // namespace

TEST_CASE("time window keeps start to end and moves start to 0") {
  TimeWindow w(list({req(0, 1, 1), req(5, 2, 1), req(10, 3, 1), req(14.5, 4, 1), req(15, 5, 1), req(20, 6, 1)}), 5.0, 15.0);
  const auto rs = drain(w);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].arrival_s == 0.0);
  CHECK(rs[0].input_tokens == 2);
  CHECK(rs[0].id == 0);
  CHECK(rs[2].arrival_s == 9.5);
  CHECK(rs[2].id == 2);
  CHECK(w.stats().outside_window == 1);
  CHECK(w.stats().emitted == 3);
  CHECK_THROWS_WITH(TimeWindow(list({}), 10.0, 5.0), "window: end_s must be after start_s (10), got 5");
  CHECK_THROWS_WITH(TimeWindow(list({}), -1.0, std::nullopt), "window: start_s must be a non-negative number of seconds, got -1");
}

TEST_CASE("time window on a real trace matches counting the rows") {
  std::uint64_t expected = 0;
  {
    auto all = azure_conv();
    Request r;
    while (all->next(r)) expected += r.arrival_s >= 600.0 && r.arrival_s < 1200.0;
  }
  TimeWindow w(azure_conv(), 600.0, 1200.0);
  const Summary s = summarize(w);
  CHECK(s.count == expected);
  CHECK(s.count > 3'000);
  CHECK(s.first_arrival_s >= 0.0);
  CHECK(s.last_arrival_s < 600.0);
}

TEST_CASE("rate scale below 1 thins the trace and keeps its length") {
  RateScale half(azure_conv(), 0.5, 7);
  const Summary s = summarize(half);
  // Binomial(19,366, 0.5): standard deviation 70.
  CHECK(std::fabs(static_cast<double>(s.count) - 9'683.0) < 3 * 70.0);
  CHECK(s.span_s == Approx(3501.7).epsilon(0.01));
  CHECK(half.stats().thinned + s.count == 19'366);
  CHECK(half.stats().emitted == s.count);
  // Deterministic for a seed.
  RateScale again(azure_conv(), 0.5, 7), other(azure_conv(), 0.5, 8);
  const auto a = drain(again), b = drain(other);
  CHECK(a.size() == s.count);
  bool ids_dense = true;
  for (std::size_t i = 0; i < a.size(); ++i) ids_dense &= a[i].id == i;
  CHECK(ids_dense);
  bool differs = a.size() != b.size();
  for (std::size_t i = 0; !differs && i < a.size(); ++i) differs = a[i].arrival_s != b[i].arrival_s;
  CHECK(differs);
}

TEST_CASE("rate scale above 1 compresses time") {
  RateScale twice(azure_conv(), 2.0, 7);
  const Summary s = summarize(twice);
  CHECK(s.count == 19'366);
  CHECK(s.span_s == Approx(3501.721937 / 2).margin(1e-9));
  CHECK(s.rate_per_s == Approx(2 * 5.5301364).epsilon(1e-6));
  CHECK_THROWS_WITH(RateScale(list({}), 0.0, 1), "rate_scale: must be a positive number, got 0");
}

TEST_CASE("time scale multiplies arrival times") {
  TimeScale slow(list({req(0, 1, 1), req(1.5, 1, 1), req(4, 1, 1)}), 3.0);
  const auto rs = drain(slow);
  REQUIRE(rs.size() == 3);
  CHECK(rs[1].arrival_s == 4.5);
  CHECK(rs[2].arrival_s == 12.0);
  CHECK_THROWS_WITH(TimeScale(list({}), -2.0), "time_scale: must be a positive number, got -2");
}

TEST_CASE("clipping to the context truncates or drops") {
  auto input = [] {
    Request big = req(2, 1300, 50);  // 3 blocks of 512
    big.prefix_hashes = {1, 2, 3};
    big.prefix_block_tokens = 512;
    return list({req(0, 100, 20), req(1, 900, 300), big, req(3, 1000, 0)});
  };
  ClipToContext t(input(), 1024, ClipMode::truncate);
  const auto rs = drain(t);
  REQUIRE(rs.size() == 4);
  CHECK(rs[0].input_tokens == 100);  // fits: untouched
  CHECK(rs[0].output_tokens == 20);
  CHECK(rs[1].input_tokens == 900);  // output cut to the room left
  CHECK(rs[1].output_tokens == 124);
  CHECK(rs[2].input_tokens == 1023);  // prompt cut, one output token left
  CHECK(rs[2].output_tokens == 1);
  CHECK(rs[2].prefix_hashes == std::vector<std::uint64_t>{1, 2});
  CHECK(rs[3].output_tokens == 0);  // a kept prefill-only request stays so
  CHECK(t.stats().input_clipped == 1);
  CHECK(t.stats().output_clipped == 2);

  ClipToContext d(input(), 1024, ClipMode::drop);
  const auto rd = drain(d);
  REQUIRE(rd.size() == 3);
  CHECK(rd[2].input_tokens == 1000);
  CHECK(rd[2].id == 2);
  CHECK(d.stats().dropped_too_long == 1);
  CHECK(describe(d.stats()) ==
        "0 rows read, 3 requests; outputs cut to the context: 1; dropped as longer than the context: 1");
  CHECK_THROWS_WITH(ClipToContext(list({}), 1, ClipMode::drop),
                    "clip: context must be at least 2 tokens (one prompt, one output), got 1");
}

TEST_CASE("clipping a Mooncake trace keeps the hashes of the blocks that remain") {
  ClipToContext c(open_trace(headroom::test::data_file("mooncake_conversation_trace.jsonl")), 8192, ClipMode::truncate);
  Request r;
  bool fits = true, hashes_match = true;
  std::uint64_t n = 0;
  while (c.next(r)) {
    fits &= r.input_tokens + r.output_tokens <= 8192 && r.output_tokens >= 1;
    hashes_match &= r.prefix_hashes.size() == static_cast<std::size_t>((r.input_tokens + 511) / 512);
    ++n;
  }
  CHECK(n == 12'031);
  CHECK(fits);
  CHECK(hashes_match);
  CHECK(c.stats().input_clipped > 0);
}

TEST_CASE("max requests stops early") {
  MaxRequests m(azure_conv(), 100);
  const Summary s = summarize(m);
  CHECK(s.count == 100);
  CHECK(m.stats().rows == 100);  // the rest of the file is not read
  MaxRequests none(list({req(0, 1, 1)}), 0);
  CHECK(drain(none).empty());
}

TEST_CASE("percentiles interpolate linearly") {
  const std::vector<Tokens> v{10, 20, 30, 40};
  CHECK(percentile(v, 0.0) == 10);
  CHECK(percentile(v, 0.5) == 25);
  CHECK(percentile(v, 0.99) == Approx(39.7));
  CHECK(percentile(v, 1.0) == 40);
  CHECK(percentile({}, 0.5) == 0);
  ListSource one({req(3, 5, 6)});
  const Summary s = summarize(one);
  CHECK(s.count == 1);
  CHECK(s.span_s == 0);
  CHECK(s.rate_per_s == 0);
  CHECK(s.input.p99 == 5);
}
