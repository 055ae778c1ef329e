// LightLLM's scheduler (docs/serving-memory-model.md §3): the worst-case future peak with a worked
// example, the router's admission limits (peak, running_max_req_size, batch_max_tokens), chunked
// prefill, pausing when the router's estimates fall short, arrival checks, and a seeded property
// run with invariants after every step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/engine/lightllm_scheduler.hpp"
#include "tests/engine/scheduler_harness.hpp"
#include "tests/support/sanitizers.hpp"

using namespace headroom;
using namespace headroom::engine;

namespace {

LightllmSchedulerLimits limits(Tokens capacity) {
  LightllmSchedulerLimits l;
  l.kv_capacity = capacity;
  l.running_max_req_size = 1000;
  l.batch_max_tokens = 8448;
  l.max_req_total_len = 1 << 20;
  l.chunked_prefill_size = 4096;
  return l;
}

using Harness = headroom::engine::test::SchedulerHarness<LightllmScheduler>;

}  // namespace

TEST_CASE("LightLLM scheduler: worst-case future peak worked example") {
  // (used, left) = (10, 5), (20, 2), (5, 8). Sorted by left descending: (5, 8), (10, 5), (20, 2).
  //   i = 1: 8 × 1 + 5            = 13   (the longest request alone, at its end)
  //   i = 2: 5 × 2 + 5 + 10       = 25   (when the second longest ends, both hold 5 more)
  //   i = 3: 2 × 3 + 5 + 10 + 20  = 41   (when the shortest ends, all three hold 2 more)
  std::vector<LightllmTokenTuple> t{{10, 5}, {20, 2}, {5, 8}};
  CHECK(lightllm_worst_case_peak(t) == 41);
  CHECK(t.front().left == 8);  // sorted in place
  std::vector<LightllmTokenTuple> one{{100, 50}};
  CHECK(lightllm_worst_case_peak(one) == 150);
  std::vector<LightllmTokenTuple> none;
  CHECK(lightllm_worst_case_peak(none) == 0);
  // A long request dominates: (1, 100) with (50, 1): max(100 + 1, 2 + 51) = 101.
  std::vector<LightllmTokenTuple> skew{{50, 1}, {1, 100}};
  CHECK(lightllm_worst_case_peak(skew) == 101);
}

TEST_CASE("LightLLM scheduler: admission keeps the worst-case peak below max_total_token_num") {
  // Pool of 100. A waiting request counts (input + 1, max_new − 2): A (30 + 30) is (31, 28).
  SECTION("B (20 + 20) is (21, 18): peak max(28 + 31, 18 × 2 + 52) = 88 < 100") {
    Harness h(limits(100));
    h.add(30, 30);
    h.add(20, 20);
    h.step();
    CHECK(h.plan.scheduled.size() == 2);
  }
  SECTION("B (20 + 30) is (21, 28): peak 28 × 2 + 52 = 108 >= 100, B waits") {
    Harness h(limits(100));
    const std::uint64_t a = h.add(30, 30);
    const std::uint64_t b = h.add(20, 30);
    h.step();
    REQUIRE(h.plan.scheduled.size() == 1);
    CHECK(h.plan.scheduled[0].id == a);
    CHECK(h.r(b).status == RequestStatus::waiting);
    // A running with o outputs counts (30 + o, 30 − o − 1); B fits once
    // max(29 − o + 30 + o, (28 … ) ) allows: simulate and check B starts before A ends.
    std::int64_t b_start = -1;
    while (h.sched.has_work()) {
      h.step();
      if (b_start < 0 && h.r(b).status == RequestStatus::running) {
        b_start = h.steps;
        // The router's own figure at admission, with B counted as running now.
        std::vector<LightllmTokenTuple> t{h.sched.token_tuple(a, true), h.sched.token_tuple(b, true)};
        CHECK(lightllm_worst_case_peak(t) < 100);
      }
    }
    CHECK(b_start > 1);
    CHECK(h.r(a).output_tokens == 30);
    CHECK(h.r(b).output_tokens == 30);
    CHECK(h.sched.counters().preemptions == 0);
  }
}

TEST_CASE("LightLLM scheduler: running_max_req_size and batch_max_tokens limit admission") {
  SECTION("running_max_req_size") {
    LightllmSchedulerLimits l = limits(100000);
    l.running_max_req_size = 2;
    Harness h(l);
    for (int i = 0; i < 3; ++i) h.add(10, 3);
    h.step();
    CHECK(h.plan.scheduled.size() == 2);
    CHECK(h.sched.running_batch().size() == 2);
    h.step();
    h.step();
    CHECK(h.r(0).status == RequestStatus::finished);
    h.step();
    REQUIRE(h.is_prefill());
    CHECK(h.plan.scheduled[0].id == 2);
  }
  SECTION("batch_max_tokens counts each newcomer's first chunk and one token per running request") {
    LightllmSchedulerLimits l = limits(100000);
    l.chunked_prefill_size = 64;
    l.batch_max_tokens = 130;
    Harness h(l);
    h.add(60, 5);
    h.add(60, 5);
    h.add(60, 5);
    h.step();  // 60 + 60 <= 130 < 180
    CHECK(h.plan.scheduled.size() == 2);
    h.step();  // 1 + 1 (running) + 60 = 62: the third is admitted and prefilled
    REQUIRE(h.is_prefill());
    CHECK(h.plan.scheduled.size() == 1);
    CHECK(h.plan.scheduled[0].id == 2);
  }
}

TEST_CASE("LightLLM scheduler: chunked prefill cuts a long prompt into chunked_prefill_size pieces") {
  LightllmSchedulerLimits l = limits(100000);
  l.chunked_prefill_size = 64;
  l.batch_max_tokens = 128;
  Harness h(l);
  const std::uint64_t a = h.add(200, 2);
  const Tokens chunks[] = {64, 64, 64, 8};
  for (int k = 0; k < 4; ++k) {
    h.step();
    REQUIRE(h.is_prefill());
    CHECK(h.plan.scheduled[0].new_tokens == chunks[k]);
    CHECK(h.plan.scheduled[0].context_tokens == 64 * k);
    CHECK(h.plan.scheduled[0].samples == (k == 3));
    CHECK(h.sched.pool().used() == 64 * k + chunks[k]);
  }
  h.step();
  CHECK(h.plan.decode_seqs == 1);
  CHECK(h.r(a).status == RequestStatus::finished);
  CHECK(h.sched.pool().used() == 0);

  SECTION("without chunked prefill the prompt goes in whole") {
    LightllmSchedulerLimits w = limits(100000);
    w.chunked_prefill = false;
    w.max_req_total_len = 4096;
    w.batch_max_tokens = 4096;
    Harness g(w);
    g.add(3000, 2);
    g.step();
    CHECK(g.plan.scheduled[0].new_tokens == 3000);
  }
}

TEST_CASE("LightLLM scheduler: with low output estimates the pool runs short and requests pause and resume") {
  // router_token_ratio 1 (never busy below a full pool) and router_max_new_token_len 8: the
  // router counts each request as 8 outputs, so both start although 10 + 11 + 2 × 80 > 100.
  LightllmSchedulerLimits l = limits(100);
  l.router_token_ratio = 1.0;
  l.router_max_new_token_len = 8;
  Harness h(l);
  const std::uint64_t a = h.add(10, 80);
  const std::uint64_t b = h.add(11, 80);
  h.step();
  CHECK(h.plan.scheduled.size() == 2);
  std::int64_t paused_at = -1;
  while (paused_at < 0) {
    h.step();
    REQUIRE(h.steps < 200);
    if (!h.plan.preempted.empty()) paused_at = h.steps;
  }
  // 21 + 2 × 39 = 99 slots used: A, first in the batch, gets the last one; B is paused, its KV freed.
  CHECK(paused_at == 1 + 39 + 1);
  CHECK(h.plan.preempted == std::vector<std::uint64_t>{b});
  CHECK(h.sched.paused(b));
  CHECK(h.r(b).status == RequestStatus::preempted);
  CHECK(h.r(b).computed_tokens == 0);
  CHECK(h.sched.pool().tokens_of(b) == 0);
  CHECK(h.plan.decode_seqs == 1);
  CHECK(h.plan.scheduled[0].id == a);
  CHECK(h.sched.running() == 1);
  CHECK(h.sched.waiting() == 1);
  const Tokens b_outputs = h.r(b).output_tokens;
  // B comes back on a recovery turn (every 100 steps) once its prompt and outputs fit — here
  // only after A has finished — is prefilled again over both, and finishes.
  bool resumed = false;
  while (h.sched.has_work()) {
    h.step();
    if (!resumed && h.is_prefill()) {
      resumed = true;
      CHECK(h.plan.scheduled[0].id == b);
      CHECK(h.plan.scheduled[0].new_tokens == 11 + b_outputs);
      CHECK(h.r(a).status == RequestStatus::finished);
    }
  }
  CHECK(resumed);
  CHECK(h.r(a).output_tokens == 80);
  CHECK(h.r(b).output_tokens == 80);
  CHECK(h.r(b).preemptions >= 1);
  CHECK(h.sched.counters().preemptions == h.r(a).preemptions + h.r(b).preemptions);
}

TEST_CASE("LightLLM scheduler: arrivals longer than max_req_total_len or the pool are aborted") {
  LightllmSchedulerLimits l = limits(1000);
  l.max_req_total_len = 900;
  Harness h(l);
  const std::uint64_t too_long = h.add(800, 101);  // 901 > 900
  const std::uint64_t ok = h.add(800, 100);
  h.step();
  CHECK(h.plan.aborted == std::vector<std::uint64_t>{too_long});
  CHECK(h.sched.abort_reason(too_long) == LightllmAbort::max_req_total_len);
  CHECK(h.r(ok).status == RequestStatus::running);

  LightllmSchedulerLimits m = limits(1000);
  Harness g(m);
  const std::uint64_t big = g.add(900, 100);  // 900 + 100 + 1 > 1000
  const std::uint64_t fits = g.add(899, 100);
  CHECK(g.sched.abort_reason(big) == LightllmAbort::exceeds_kv_pool);
  while (g.sched.has_work()) g.step();
  CHECK(g.r(fits).output_tokens == 100);
  CHECK(lightllm_abort_name(LightllmAbort::exceeds_kv_pool) == "longer than the KV pool");
}

TEST_CASE("LightLLM scheduler: limits LightLLM refuses to start with") {
  LightllmSchedulerLimits l = limits(1000);
  l.batch_max_tokens = 100;
  l.chunked_prefill_size = 200;
  CHECK_THROWS_WITH(LightllmScheduler(l), "lightllm batch_max_tokens 100: chunked prefill mode needs batch_max_tokens >= "
                                          "chunked_prefill_size (200)");
  l = limits(1000);
  l.chunked_prefill = false;
  l.max_req_total_len = 16384;
  l.batch_max_tokens = 8448;
  CHECK_THROWS_WITH(LightllmScheduler(l), "lightllm batch_max_tokens 8448: without chunked prefill batch_max_tokens "
                                          "must be >= max_req_total_len (16384)");
  l = limits(0);
  CHECK_THROWS_WITH(LightllmScheduler(l), "lightllm max_total_token_num: expected at least 1, got 0");
}

TEST_CASE("LightLLM scheduler: limits from a resolved LightllmConfig") {
  LightllmConfig c;
  CHECK_THROWS_AS(lightllm_scheduler_limits(c, 1000), std::logic_error);
  c.batch_max_tokens = 8448;
  const LightllmSchedulerLimits l = lightllm_scheduler_limits(c, 456000);
  CHECK(l.kv_capacity == 456000);
  CHECK(l.batch_max_tokens == 8448);
  CHECK(l.running_max_req_size == 1000);
  CHECK(l.max_req_total_len == 16384);
  CHECK(l.chunked_prefill_size == 4096);
  CHECK(l.chunked_prefill);
  CHECK(l.router_token_ratio == 0.0);
  CHECK(l.router_max_new_token_len == 1024);
}

TEST_CASE("LightLLM scheduler: a dropped step aborts its requests and frees their KV") {
  Harness h(limits(100000));
  h.add(100, 10);
  h.plan.clear();
  h.sched.schedule(h.now, h.plan);
  REQUIRE(h.plan.scheduled.size() == 1);
  h.sched.drop_step(h.plan);
  h.sched.check_invariants();
  CHECK(h.r(0).status == RequestStatus::aborted);
  CHECK(h.sched.abort_reason(0) == LightllmAbort::dropped_step);
  CHECK(h.sched.pool().used() == 0);
  CHECK_FALSE(h.sched.has_work());
}

namespace {

struct PropertyConfig {
  std::uint64_t seed;
  Tokens capacity;
  bool chunked;
  std::int64_t max_running;
  double router_token_ratio;
  Tokens router_max_new_token_len;
  int requests;
  Tokens max_prompt;
  Tokens max_output;
};

struct PropertyOutcome {
  std::int64_t steps = 0;
  std::int64_t preemptions = 0;
  std::int64_t aborted = 0;
  Tokens peak_used = 0;
};

PropertyOutcome run_property(const PropertyConfig& pc) {
  Rng rng(pc.seed);
  LightllmSchedulerLimits l = limits(pc.capacity);
  l.chunked_prefill = pc.chunked;
  l.chunked_prefill_size = 512;
  l.max_req_total_len = 6000;
  l.batch_max_tokens = pc.chunked ? 1280 : 6000;
  l.running_max_req_size = pc.max_running;
  l.router_token_ratio = pc.router_token_ratio;
  l.router_max_new_token_len = pc.router_max_new_token_len;
  Harness h(l);
  std::vector<Seconds> arrivals;
  Seconds t = 0;
  for (int i = 0; i < pc.requests; ++i) {
    t += rng.exponential(40.0);
    arrivals.push_back(t);
  }
  std::size_t next = 0;
  std::vector<Tokens> trace_output;
  std::uint64_t last_start = 0;
  bool any_start = false;
  Tokens sampled = 0;
  PropertyOutcome out;
  while (next < arrivals.size() || h.sched.has_work()) {
    while (next < arrivals.size() && arrivals[next] <= h.now) {
      Tokens prompt = static_cast<Tokens>(rng.uniform_int(1, static_cast<std::uint64_t>(pc.max_prompt)));
      const Tokens output = static_cast<Tokens>(rng.uniform_int(1, static_cast<std::uint64_t>(pc.max_output)));
      if (rng.bernoulli(0.005)) prompt = 6000;  // beyond max_req_total_len
      trace_output.push_back(output);
      h.add(prompt, output);
      ++next;
    }
    h.plan.clear();
    h.sched.schedule(h.now, h.plan);
    // The scheduler's invariants after every call in Release, at every fourth step under the
    // sanitizers, where their walks over every request are most of the run; the walk, and so every
    // figure checked below, is the same in both builds.
    const bool full_check = headroom::test::sanitized_every(out.steps, 4);
    if (full_check) h.sched.check_invariants();
    out.aborted += static_cast<std::int64_t>(h.plan.aborted.size());
    if (h.plan.empty()) {
      if (next == arrivals.size() && !h.sched.has_work()) break;  // the last plan only reported aborts
      REQUIRE(next < arrivals.size());
      REQUIRE(h.sched.running_batch().empty());
      h.now = std::max(h.now, arrivals[next]);
      continue;
    }
    // FCFS admission: the router takes waiting requests in arrival order, so every request it has
    // admitted arrived before every request still waiting. (The backend may then run a later
    // request's prefill first when an earlier one's chunk does not fit batch_max_tokens.)
    for (std::uint64_t id : h.sched.running_batch()) {
      if (!any_start || id > last_start) last_start = id;
      any_start = true;
    }
    if (any_start && !h.sched.waiting_queue().empty()) REQUIRE(h.sched.waiting_queue().front() > last_start);
    const StepPlan& p = h.plan;
    const bool prefill = !p.scheduled.front().is_decode;
    Tokens prefill_tokens = 0;
    bool seen_prefill = false;
    for (const ScheduledRequest& s : p.scheduled) {
      if (prefill) {
        REQUIRE(!s.is_decode);
        prefill_tokens += s.new_tokens;
        if (pc.chunked) REQUIRE(s.new_tokens <= 512);
      } else {
        REQUIRE(s.new_tokens == 1);
        if (!s.is_decode) seen_prefill = true;
        else REQUIRE_FALSE(seen_prefill);  // decodes first
      }
      if (s.samples) ++sampled;
    }
    if (prefill) REQUIRE(prefill_tokens <= l.batch_max_tokens);
    REQUIRE(static_cast<std::int64_t>(h.sched.running_batch().size()) <= pc.max_running);
    out.peak_used = std::max(out.peak_used, h.sched.pool().used());
    REQUIRE(h.sched.pool().used() <= pc.capacity);
    h.now += 0.001 + 1e-6 * static_cast<double>(p.total_tokens);
    h.finished.clear();
    h.sched.complete_step(p, h.now, h.finished);
    if (full_check) h.sched.check_invariants();
    ++out.steps;
    REQUIRE(out.steps < 2000000);
  }
  Tokens generated = 0;
  std::int64_t finished = 0;
  for (std::size_t id = 0; id < h.table.size(); ++id) {
    const RequestState& r = h.table[id];
    generated += r.output_tokens;
    if (r.status == RequestStatus::finished) {
      ++finished;
      REQUIRE(r.output_tokens == trace_output[id]);
    } else {
      REQUIRE(r.status == RequestStatus::aborted);
      const LightllmAbort why = h.sched.abort_reason(id);
      if (why == LightllmAbort::max_req_total_len) REQUIRE(r.prompt_tokens + trace_output[id] > l.max_req_total_len);
      else REQUIRE((why == LightllmAbort::exceeds_kv_pool && r.prompt_tokens + trace_output[id] + 1 > pc.capacity));
    }
  }
  REQUIRE(generated == sampled);
  REQUIRE(finished + out.aborted == pc.requests);
  REQUIRE(h.sched.pool().used() == 0);
  out.preemptions = h.sched.counters().preemptions;
  return out;
}

}  // namespace

TEST_CASE("LightLLM scheduler: property: chunked prefill with default and with optimistic estimates") {
  // The same seeded workload twice. With the default estimates (max_new_tokens, router_token_ratio
  // 0) the bound is exact but for the chunks' delay, so pauses are rare; counting every request as
  // 64 outputs while the pool is below 90 % admits more and pauses far more.
  const PropertyOutcome exact = run_property({11, 8000, true, 128, 0.0, 1024, 400, 2500, 500});
  const PropertyOutcome optimistic = run_property({11, 8000, true, 128, 0.9, 64, 400, 2500, 500});
  INFO("pauses: default " << exact.preemptions << ", optimistic " << optimistic.preemptions);
  CHECK(exact.steps > 3000);
  CHECK(exact.peak_used > 8000 / 2);  // the pool was really used
  CHECK(optimistic.preemptions > 10 * (exact.preemptions + 1));
}

TEST_CASE("LightLLM scheduler: property: without chunked prefill the default estimates never pause") {
  // Every prefill happens whole before the next decode step, so each request decodes from the
  // step the router assumed and the worst-case peak bounds the pool exactly.
  const PropertyOutcome o = run_property({13, 12000, false, 64, 0.0, 1024, 400, 3000, 500});
  CHECK(o.steps > 2000);
  CHECK(o.peak_used > 12000 / 2);
  CHECK(o.preemptions == 0);
}

TEST_CASE("LightLLM scheduler: property: without chunked prefill optimistic estimates pause and recover") {
  const PropertyOutcome o = run_property({14, 12000, false, 64, 0.9, 64, 400, 3000, 500});
  CHECK(o.steps > 2000);
  CHECK(o.preemptions > 0);
}
