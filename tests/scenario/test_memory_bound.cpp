// Memory that follows the requests in flight, not the trace's length: after a run over many
// requests, the request table never held more rows than the widest window of ids between the
// oldest request not yet finished and the newest arrival, computed here from the requests' own
// records; and that window is a small fraction of the trace.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/scenario/outcome.hpp"
#include "sim/scenario/scenario.hpp"

using namespace headroom;

namespace {

// The widest window of rows a table must hold if it drops each request when it finishes: at the
// arrival of request k, the ids from the oldest request still unfinished to k. `finished_at_tie`:
// whether a request finishing at the very instant of an arrival counts as gone (the event order
// at equal times decides, so the table's figure lies between the two).
std::int64_t widest_window(const std::vector<double>& arrival, const std::vector<double>& finish, bool finished_at_tie) {
  std::int64_t widest = 0;
  std::size_t oldest = 0;  // arrivals only move forward, so the oldest unfinished id does too
  for (std::size_t k = 0; k < arrival.size(); ++k) {
    while (oldest < k && (finished_at_tie ? finish[oldest] <= arrival[k] : finish[oldest] < arrival[k])) ++oldest;
    widest = std::max<std::int64_t>(widest, static_cast<std::int64_t>(k - oldest) + 1);
  }
  return widest;
}

}  // namespace

TEST_CASE("memory bound: the request table holds only the live window of a long trace") {
  const std::int64_t n = 20000;
  const scenario::Scenario sc = scenario::parse_scenario(
      "name: bound\n"
      "gpu: {profile: h100-sxm-80gb}\n"
      "model: {name: Llama-3.1-8B}\n"
      "engine: {kind: vllm}\n"
      "workload: {synthetic: {requests: 20000, arrivals: {process: poisson, rate: 20}, "
      "input: {dist: lognormal, mean: 512, cv: 1, max: 8192}, output: {dist: lognormal, mean: 64, cv: 1, max: 2048}}}\n",
      "bound.yaml", "/tmp");
  std::vector<double> arrival(n, -1), finish(n, -1);
  scenario::SimulateOptions opt;
  opt.on_request = [&](const engine::RequestRecord& r) {
    REQUIRE(r.id < static_cast<std::uint64_t>(n));
    arrival[r.id] = r.arrival_s;
    finish[r.id] = r.arrival_s + r.e2e_s;
  };
  const scenario::Outcome o = scenario::simulate(sc, sc.policy, opt);
  REQUIRE(o.serving);
  REQUIRE(o.serving->completed == n);  // every request finished: each has a finish time
  const std::int64_t rows = o.serving->peak_table_rows;
  INFO("peak rows " << rows);
  CHECK(rows >= 1);
  CHECK(rows <= widest_window(arrival, finish, false));
  CHECK(rows >= widest_window(arrival, finish, true));
  CHECK(rows < n / 50);  // a few hundred at most: the requests in flight, not the trace
}
