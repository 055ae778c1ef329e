// Verdicts beyond OOM (issue 16): a queue that cannot keep up is overloaded, a scenario's SLO is met
// or missed with the figure that decided it, queue_s is the time from arrival to first scheduling.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/report/verdict.hpp"
#include "sim/scenario/outcome.hpp"
#include "sim/scenario/resolved_scenario.hpp"
#include "sim/scenario/scenario.hpp"

using namespace headroom;

namespace {

// vLLM with one running request at a time (max_num_seqs 1): each request's 100-token prefill and 19
// decode steps take ~0.118 s, so 40 requests arriving at 400/s (all within ~0.1 s) queue behind
// each other; at 2/s each finds the engine idle or nearly so.
scenario::Scenario one_at_a_time(double rate, const std::string& slo = "") {
  return scenario::parse_scenario(
      "name: verdict\n"
      "gpu: {profile: h100-sxm-80gb}\n"
      "model: {name: Llama-3.1-8B}\n"
      "engine: {kind: vllm, max_num_seqs: 1}\n"
      "workload: {synthetic: {requests: 40, arrivals: {process: poisson, rate: " + std::to_string(rate) + "}, "
      "input: {dist: fixed, value: 100}, output: {dist: fixed, value: 20}}}\n" + slo,
      "verdict.yaml", "/tmp");
}

// An outcome with only the serving figures the overload rule reads.
report::Outcome served(std::int64_t arrived, std::int64_t waiting_at_last_arrival) {
  report::Outcome o;
  o.start.startup.ok = true;
  engine::ServingResult r;
  r.arrived = arrived;
  r.completed = arrived;
  r.last_arrival_s = 100;
  r.waiting_at_last_arrival = waiting_at_last_arrival;
  r.end_time_s = 130;
  o.serving = r;
  return o;
}

}  // namespace

TEST_CASE("verdict: overloaded when more than a tenth of the arrivals still wait at the last arrival") {
  const report::Verdict at = report::judge(served(100, 10), {});  // exactly 10 %: keeps up
  REQUIRE(at.overloaded);
  CHECK_FALSE(*at.overloaded);
  CHECK_FALSE(at.oom);
  CHECK_FALSE(at.slo_met);  // no SLO: null, not true
  const report::Verdict over = report::judge(served(100, 11), {}, "an engine", "an engine serves all 100 requests");
  REQUIRE(over.overloaded);
  CHECK(*over.overloaded);
  CHECK(over.text ==
        "an engine is overloaded: 11 of 100 requests (11 %) still waiting at the last arrival (100.0 s), over the 10 % "
        "at which its queue grows without bound; serving them took until 130.0 s");
  const nlohmann::json j = report::verdict_json(over);
  CHECK(j["oom"] == false);
  CHECK(j["slo_met"].is_null());
  CHECK(j["overloaded"] == true);
  CHECK(j["overload"]["waiting_at_last_arrival"] == 11);
  CHECK(j["overload"]["waiting_share"] == 0.11);
  CHECK(j["overload"]["threshold"] == 0.1);
  // A server that died before the last arrival leaves it undecided; one that did not start too.
  report::Outcome died = served(100, 0);
  died.serving->died = true;
  died.serving->last_arrival_s.reset();
  died.serving->ooms.push_back({});
  const report::Verdict d = report::judge(died, {});
  CHECK(d.oom);
  CHECK_FALSE(d.overloaded);
  CHECK(report::verdict_json(d)["overloaded"].is_null());
  CHECK_FALSE(report::judge(report::Outcome{}, {}).overloaded);
}

TEST_CASE("verdict: one running request and 40 arrivals in 0.1 s is overloaded, at 2 per second it keeps up") {
  std::vector<engine::RequestRecord> rows;
  scenario::SimulateOptions opt;
  opt.on_request = [&](const engine::RequestRecord& r) { rows.push_back(r); };
  const scenario::Scenario busy = one_at_a_time(400);
  const report::Outcome o = scenario::simulate(busy, busy.policy, opt);
  REQUIRE(o.started());
  REQUIRE(rows.size() == 40);
  // queue_s is arrival to first scheduling: with one request at a time, request k is scheduled in the
  // step planned when request k-1 finishes (rows leave in id order here).
  for (std::size_t k = 1; k < rows.size(); ++k) {
    INFO(k);
    REQUIRE(rows[k].id == k);
    CHECK(rows[k].arrival_s + rows[k].queue_s == Approx(rows[k - 1].arrival_s + rows[k - 1].e2e_s).epsilon(1e-12));
    CHECK(rows[k].queue_s < rows[k].ttft_s);
  }
  CHECK(rows[0].queue_s == 0);  // the first finds the engine idle
  // The last request arrives before the first finishes: one running, 39 waiting, 0 completed.
  REQUIRE(o.serving->last_arrival_s);
  CHECK(*o.serving->last_arrival_s < rows[0].e2e_s);
  CHECK(o.serving->waiting_at_last_arrival == 39);
  const report::Verdict v = report::judge(o, busy.slo);
  CHECK(v.overloaded == true);
  CHECK(v.overload->share() == Approx(39.0 / 40));
  CHECK(o.queue.count == 40);
  CHECK(o.queue.max == Approx(rows.back().queue_s).epsilon(1e-12));

  const scenario::Scenario calm = one_at_a_time(2);
  const report::Outcome c = scenario::simulate(calm, calm.policy);
  CHECK(report::judge(c, calm.slo).overloaded == false);
  CHECK(c.serving->waiting_at_last_arrival <= 1);
}

TEST_CASE("verdict: a loose SLO is met and a tight one missed, with the figure that decided it") {
  const scenario::Scenario calm = one_at_a_time(2);
  const report::Outcome o = scenario::simulate(calm, calm.policy);
  REQUIRE(o.ttft.count == 40);
  report::Slo loose{o.ttft.p99 * 2, o.tpot.p99 * 2, o.e2e.p99 * 2, o.queue.p99 * 2};
  const report::Verdict met = report::judge(o, loose, "vLLM", "vLLM serves all 40 requests without running out of memory");
  CHECK(met.slo_met == true);
  REQUIRE(met.slo.size() == 4);
  CHECK(met.slo[0].value == o.ttft.p99);
  CHECK(met.text.rfind("vLLM serves all 40 requests without running out of memory, within the SLO (TTFT p99 ", 0) == 0);

  report::Slo tight = loose;
  tight.e2e_p99_s = o.e2e.p99 / 2;
  const report::Verdict missed = report::judge(o, tight, "vLLM", "unused");
  CHECK(missed.slo_met == false);
  CHECK(missed.overloaded == false);
  CHECK(missed.text == fmt::format("vLLM misses the SLO: e2e p99 {:.3f} s > {:.3f} s", o.e2e.p99, o.e2e.p99 / 2));
  const nlohmann::json j = report::verdict_json(missed);
  CHECK(j["slo_met"] == false);
  CHECK(j["slo"][2]["objective"] == "e2e_p99_s");
  CHECK(j["slo"][2]["met"] == false);
  CHECK(j["slo"][2]["value_s"] == o.e2e.p99);

  // No sample (nothing finished) does not meet a limit; an engine that did not start misses it.
  report::Outcome none = served(40, 0);
  none.ttft = o.ttft;
  none.e2e = o.e2e;
  none.queue = o.queue;  // and no TPOT
  const report::Verdict no_sample = report::judge(none, tight);
  CHECK(no_sample.slo[1].value == std::nullopt);
  CHECK_FALSE(no_sample.slo[1].met);
  CHECK(report::missed_slo(no_sample).rfind("TPOT p99 - (no request finished) against ", 0) == 0);
  CHECK(report::judge(report::Outcome{}, loose).slo_met == false);
}

TEST_CASE("verdict: the scenario's slo key is read, written back resolved, and its bad values named") {
  const scenario::Scenario s = one_at_a_time(2, "slo: {ttft_p99_s: 2, queue_s: 0.5}\n");
  CHECK(s.slo.ttft_p99_s == 2);
  CHECK(s.slo.queue_s == 0.5);
  CHECK_FALSE(s.slo.tpot_p99_s);
  CHECK_FALSE(s.slo.e2e_p99_s);
  CHECK(report::slo_json(s.slo) == nlohmann::json{{"ttft_p99_s", 2}, {"queue_s", 0.5}});
  CHECK(report::slo_json(one_at_a_time(2).slo).is_null());
  const std::string resolved = scenario::resolved_scenario_yaml(s);
  CHECK_THAT(resolved, Catch::Contains("slo:\n  ttft_p99_s: 2\n  queue_s: 0.5\n"));
  auto error = [](const std::string& slo) {
    try {
      one_at_a_time(2, slo);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("slo: {ttft_p99: 2}\n") == "verdict.yaml:6:7: unknown key 'slo.ttft_p99'; did you mean 'ttft_p99_s'?");
  CHECK(error("slo: {e2e_p99_s: -1}\n") == "verdict.yaml:6:18: key 'slo.e2e_p99_s': expected a positive number, got '-1'");
  CHECK(error("slo: {queue_s: fast}\n") == "verdict.yaml:6:16: key 'slo.queue_s': expected a positive number, got 'fast'");
  CHECK(error("slo: 2\n") == "verdict.yaml:6:6: key 'slo': expected a mapping of keys");
}
