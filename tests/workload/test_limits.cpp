// The workload's limits (sim/workload/workload_limits.hpp, docs/limits.md): the outermost source
// refuses the request past the request cap, an arrival past 30 days (both unless allow_large) and
// any arrival that is not a finite time below 10^9 s, naming the workload.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/workload/limited_source.hpp"
#include "sim/workload/make_source.hpp"
#include "sim/workload/workload_limits.hpp"

using namespace headroom;
using namespace headroom::workload;

namespace {

// Requests at the given arrival times, then `extra` more at the last one.
class TimesSource : public RequestSource {
 public:
  explicit TimesSource(std::vector<double> times, std::uint64_t extra = 0) : times_(std::move(times)), extra_(extra) {}
  bool next(Request& r) override {
    if (i_ >= times_.size() + extra_) return false;
    r = Request{};
    r.id = i_;
    r.arrival_s = times_[std::min<std::size_t>(i_, times_.size() - 1)];
    r.input_tokens = r.output_tokens = 1;
    ++i_;
    return true;
  }
  SourceStats stats() const override { return {}; }

 private:
  std::vector<double> times_;
  std::uint64_t extra_;
  std::size_t i_ = 0;
};

std::uint64_t drain(RequestSource& s) {
  Request r;
  std::uint64_t n = 0;
  while (s.next(r)) ++n;
  return n;
}

}  // namespace

TEST_CASE("the request past the cap is refused unless the workload allows large ones") {
  LimitedSource capped(std::make_unique<TimesSource>(std::vector<double>{0.0}, limits::kMaxRequests), "trace.csv", false);
  CHECK_THROWS_WITH(drain(capped), Catch::StartsWith("trace.csv: more than 10000000 requests, above the limit") &&
                                       Catch::Contains("workload.allow_large: true"));
  LimitedSource exact(std::make_unique<TimesSource>(std::vector<double>{0.0}, limits::kMaxRequests - 1), "trace.csv",
                      false);
  CHECK(drain(exact) == limits::kMaxRequests);
  LimitedSource allowed(std::make_unique<TimesSource>(std::vector<double>{0.0}, limits::kMaxRequests), "trace.csv", true);
  CHECK(drain(allowed) == limits::kMaxRequests + 1);
}

TEST_CASE("an arrival past 30 days is refused unless allowed, and one past 1e9 s or not finite always") {
  const double month = limits::kMaxDurationS;
  LimitedSource late(std::make_unique<TimesSource>(std::vector<double>{0.0, month + 1}), "w.yaml: key 'workload'", false);
  CHECK_THROWS_WITH(drain(late), Catch::StartsWith("w.yaml: key 'workload': request 1 arrives at 2592001 s, after the "
                                                   "limit of 2592000 s (30 days)"));
  LimitedSource late_ok(std::make_unique<TimesSource>(std::vector<double>{0.0, month + 1}), "w", true);
  CHECK(drain(late_ok) == 2);
  LimitedSource beyond(std::make_unique<TimesSource>(std::vector<double>{0.0, 2e9}), "w", true);
  CHECK_THROWS_WITH(drain(beyond), Catch::Contains("request 1 arrives at 2000000000 s, after the limit of 1000000000 s"));
  for (double bad : {std::numeric_limits<double>::infinity(), std::nan(""), -1.0}) {
    LimitedSource s(std::make_unique<TimesSource>(std::vector<double>{bad}), "w", true);
    CHECK_THROWS_WITH(drain(s), Catch::Contains("request 0 arrives at") && Catch::Contains("not a finite time"));
  }
}

TEST_CASE("make_source puts the limits outermost and names a synthetic workload by its place") {
  WorkloadSpec spec;
  SyntheticSpec syn;
  syn.arrivals.rate = 1e-7;  // a request every 116 days on average
  syn.input = LengthSpec{};
  syn.input->value = 10;
  syn.output = LengthSpec{};
  syn.output->value = 10;
  syn.requests = 5;
  spec.synthetic = syn;
  spec.where = "s.yaml:10:5: key 'workload.synthetic'";
  auto source = make_source(spec);
  CHECK_THROWS_WITH(drain(*source), Catch::StartsWith("s.yaml:10:5: key 'workload.synthetic': request "));
}
