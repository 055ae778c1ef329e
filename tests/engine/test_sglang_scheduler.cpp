// SGLang's scheduler (docs/serving-memory-model.md §2.4): the new_token_ratio schedule, admission
// against available + evictable − running reservations, batch_is_full, chunked prefill,
// max_prefill_tokens and max_running_requests, retract_decode's order and the ratio after it,
// the abort of a last request that cannot decode, arrival checks, and a seeded property run with
// invariants after every step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/engine/sglang_scheduler.hpp"
#include "tests/engine/scheduler_harness.hpp"
#include "tests/support/sanitizers.hpp"

using namespace headroom;
using namespace headroom::engine;

namespace {

SglangSchedulerLimits limits(Tokens capacity, std::int64_t chunk = 8192, double conservativeness = 1.0) {
  SglangSchedulerLimits l;
  l.kv_capacity = capacity;
  l.chunked_prefill_size = chunk;
  l.max_prefill_tokens = 16384;
  l.max_running_requests = 1000;
  l.context_length = 1 << 20;
  l.schedule_conservativeness = conservativeness;
  return l;
}

using Harness = headroom::engine::test::SchedulerHarness<SglangScheduler>;

}  // namespace

TEST_CASE("SGLang scheduler: new_token_ratio schedule from schedule_conservativeness") {
  const SglangNewTokenRatio r = sglang_new_token_ratio(1.0);
  CHECK(r.init == Approx(0.7));
  CHECK(r.min == Approx(0.098));  // 0.7 × 0.14 (§2.4)
  CHECK(r.decay == Approx((0.7 - 0.098) / 600));
  const SglangNewTokenRatio capped = sglang_new_token_ratio(2.0);  // min(1.4, 1)
  CHECK(capped.init == Approx(1.0));
  CHECK(capped.min == Approx(0.14));
  CHECK(sglang_new_token_ratio(0.5).init == Approx(0.35));
}

TEST_CASE("SGLang scheduler: the ratio decays once per decode step down to its floor and resets when idle") {
  Harness h(limits(100000));
  const SglangNewTokenRatio r = h.sched.new_token_ratio_schedule();
  h.add(10, 5);
  h.step();  // prefill: no decay
  CHECK(h.is_prefill());
  CHECK(h.sched.new_token_ratio() == Approx(r.init));
  for (int k = 1; k <= 4; ++k) {
    h.step();
    CHECK(h.plan.decode_seqs == 1);
    CHECK(h.sched.new_token_ratio() == Approx(r.init - k * r.decay));
  }
  CHECK(h.r(0).status == RequestStatus::finished);
  CHECK(h.r(0).output_tokens == 5);
  h.step();  // nothing to run: the idle branch re-initialises the ratio
  CHECK(h.plan.empty());
  CHECK(h.sched.new_token_ratio() == Approx(r.init));

  h.add(10, 800);
  for (int k = 0; k < 700; ++k) h.step();
  CHECK(h.sched.new_token_ratio() == Approx(r.min));  // 600 decode steps reach the floor
}

TEST_CASE("SGLang scheduler: admission charges extend + min(max_new 4096) against available + evictable - running reservations") {
  // Worked example, pool of 1000 tokens, ratio 0.7. A (100 + 300) runs alone; after its prefill
  // it holds 100 tokens and has 1 output, so a newcomer sees
  //   rem_total = 900 − min(300 − 1, 4096) × 0.7 = 900 − 209.3 = 690.7.
  SECTION("690 fits") {
    Harness h(limits(1000));
    h.add(100, 300);
    h.step();
    const std::uint64_t b = h.add(100, 590);  // 100 + 590 = 690 < 690.7
    h.step();
    REQUIRE(h.is_prefill());
    CHECK(h.plan.scheduled.size() == 1);
    CHECK(h.plan.scheduled[0].id == b);
    CHECK_FALSE(h.sched.batch_is_full());
  }
  SECTION("700 does not, and the batch is marked full") {
    Harness h(limits(1000));
    h.add(100, 300);
    h.step();
    const std::uint64_t b = h.add(100, 600);  // 700 >= 690.7
    h.step();
    CHECK(h.plan.decode_seqs == 1);  // no prefill could be formed: A decodes
    CHECK(h.sched.batch_is_full());
    CHECK(h.r(b).status == RequestStatus::waiting);
  }
  SECTION("the clip: 10,000 new tokens are charged as 4096") {
    Harness h(limits(5000));
    h.add(100, 4800);  // 100 + min(4800, 4096) = 4196 < 5000
    h.step();
    CHECK(h.is_prefill());
    CHECK(h.r(0).status == RequestStatus::running);
  }
}

TEST_CASE("SGLang scheduler: batch_is_full holds prefill off until a running request leaves") {
  Harness h(limits(1000));
  const std::uint64_t a = h.add(100, 300);
  h.step();
  const std::uint64_t b = h.add(100, 600);  // rejected (see the worked example above)
  std::int64_t a_finished = -1, b_admitted = -1;
  for (int k = 0; k < 400 && b_admitted < 0; ++k) {
    h.step();
    if (h.r(a).status == RequestStatus::finished && a_finished < 0) a_finished = h.steps;
    if (h.is_prefill() && h.plan.scheduled[0].id == b) b_admitted = h.steps;
    // Long before A ends, its reservation (300 − out) × ratio falls below what B would need,
    // yet prefill is not tried while the batch is marked full.
    if (h.r(a).status == RequestStatus::running) CHECK(h.plan.decode_seqs == 1);
  }
  CHECK(a_finished == 300);        // 1 prefill + 299 decodes
  CHECK(b_admitted == a_finished + 1);
}

TEST_CASE("SGLang scheduler: chunked prefill cuts a long prompt across steps") {
  Harness h(limits(100000, 256));
  const std::uint64_t a = h.add(1000, 3);
  const std::uint64_t c = h.add(50, 2);
  const Tokens chunks[] = {256, 256, 256, 232};
  for (int k = 0; k < 4; ++k) {
    h.step();
    REQUIRE(h.is_prefill());
    CHECK(h.plan.scheduled[0].id == a);
    CHECK(h.plan.scheduled[0].new_tokens == chunks[k]);
    CHECK(h.plan.scheduled[0].context_tokens == 256 * k);
    CHECK(h.plan.scheduled[0].samples == (k == 3));
    CHECK(h.sched.kv_usage().used_tokens == 256 * k + chunks[k] + (k == 3 ? 24 : 0));  // + C's first piece
    if (k < 3) {
      CHECK(h.plan.scheduled.size() == 1);  // the chunk takes all of chunked_prefill_size
      CHECK(h.sched.chunked_request() == static_cast<std::int64_t>(a));
    }
  }
  // The last chunk left 24 tokens of the budget: C is cut to fill them and continues next step.
  REQUIRE(h.plan.scheduled.size() == 2);
  CHECK(h.plan.scheduled[1].id == c);
  CHECK(h.plan.scheduled[1].new_tokens == 24);
  CHECK_FALSE(h.plan.scheduled[1].samples);
  CHECK(h.sched.chunked_request() == static_cast<std::int64_t>(c));
  h.step();  // prefill has priority over A's decode
  REQUIRE(h.plan.scheduled.size() == 1);
  CHECK(h.plan.scheduled[0].id == c);
  CHECK(h.plan.scheduled[0].new_tokens == 26);
  CHECK(h.plan.scheduled[0].context_tokens == 24);
  CHECK(h.plan.scheduled[0].samples);
  h.step();
  CHECK(h.plan.decode_seqs == 2);
  while (h.sched.has_work()) h.step();
  CHECK(h.r(a).output_tokens == 3);
  CHECK(h.r(c).output_tokens == 2);
  CHECK(h.sched.kv_usage().used_tokens == 0);
  CHECK(h.sched.kv_usage().cached_tokens == 1000 + 2 + 50 + 1);  // everything computed stays cached
}

TEST_CASE("SGLang scheduler: max_prefill_tokens and max_running_requests limit a prefill batch") {
  SECTION("max_prefill_tokens, chunked prefill off") {
    SglangSchedulerLimits l = limits(100000, -1);
    l.max_prefill_tokens = 300;
    Harness h(l);
    h.add(500, 2);  // alone above the cap: the first request is always taken
    h.add(200, 2);
    h.add(200, 2);
    h.step();
    REQUIRE(h.plan.scheduled.size() == 1);
    CHECK(h.plan.scheduled[0].new_tokens == 500);  // no chunking
    h.step();
    REQUIRE(h.plan.scheduled.size() == 1);  // 200 + 200 > 300
    CHECK(h.plan.scheduled[0].id == 1);
    h.step();
    REQUIRE(h.plan.scheduled.size() == 1);
    CHECK(h.plan.scheduled[0].id == 2);
  }
  SECTION("max_running_requests") {
    SglangSchedulerLimits l = limits(100000);
    l.max_running_requests = 2;
    Harness h(l);
    for (int i = 0; i < 3; ++i) h.add(10, 3);
    h.step();
    CHECK(h.plan.scheduled.size() == 2);
    CHECK(h.sched.batch_is_full());
    h.step();
    h.step();  // the first two finish here (1 prefill + 2 decodes)
    CHECK(h.r(0).status == RequestStatus::finished);
    CHECK(h.r(2).status == RequestStatus::waiting);
    h.step();
    REQUIRE(h.is_prefill());
    CHECK(h.plan.scheduled[0].id == 2);
  }
}

TEST_CASE("SGLang scheduler: retract_decode takes the longest input first among equal outputs and then resets the ratio") {
  // Two requests of 6000 outputs are charged 4096 each at admission (the clip), so both start in a
  // pool of 10,000 tokens that cannot hold their 6100 + 6200 tokens.
  Harness h(limits(10000));
  const std::uint64_t a = h.add(100, 6000);
  const std::uint64_t b = h.add(200, 6000);
  h.step();
  REQUIRE(h.plan.scheduled.size() == 2);
  while (h.plan.preempted.empty()) {
    h.step();
    REQUIRE(h.steps < 6000);
  }
  // Equal outputs: sorted (outputs, −input) descending is [A, B]; B is popped first, and A alone
  // fits. The ratio is (A's outputs + 20 × 1) / (6000 + 1), taken before A's decode of this step.
  REQUIRE(h.plan.preempted.size() == 1);
  CHECK(h.plan.preempted[0] == b);
  const Tokens out = h.r(b).output_tokens;
  CHECK(h.r(a).output_tokens == out + 1);
  CHECK(h.sched.new_token_ratio() == Approx(std::min(1.0, (static_cast<double>(out) + 20.0 * 1) / (6000 + 1))));
  CHECK(h.r(b).status == RequestStatus::preempted);
  CHECK(h.r(b).preemptions == 1);
  CHECK(h.sched.counters().preemptions == 1);
  CHECK(h.plan.decode_seqs == 1);
  CHECK(h.plan.scheduled[0].id == a);
  // The memory ran out exactly here: the prompts, 2 × (outputs − 1) decoded tokens and 2 new slots.
  CHECK(300 + 2 * (out - 1) + 2 > 10000);
  CHECK(300 + 2 * (out - 2) + 2 <= 10000);

  // B comes back after A, re-prefills its prompt from the cache plus its outputs, and finishes.
  const Tokens out_b = h.r(b).output_tokens;
  const Tokens hits_before = h.sched.counters().prefix_hit_tokens;
  bool readmitted = false;
  while (h.sched.has_work()) {
    h.step();
    if (!readmitted && h.is_prefill()) {
      readmitted = true;
      CHECK(h.r(a).status == RequestStatus::finished);
      CHECK(h.plan.scheduled[0].id == b);
      CHECK(h.plan.scheduled[0].context_tokens == 200);  // the prompt stayed cached
      CHECK(h.plan.scheduled[0].new_tokens == out_b);    // the generated tokens are recomputed
    }
  }
  CHECK(readmitted);
  CHECK(h.sched.counters().prefix_hit_tokens - hits_before == 200);
  CHECK(h.r(a).output_tokens == 6000);
  CHECK(h.r(b).output_tokens == 6000);
  CHECK(h.r(b).status == RequestStatus::finished);
}

TEST_CASE("SGLang scheduler: retract_decode takes the fewest outputs first") {
  // A runs; B joins after 10 steps; C (the shortest input) joins after the ratio has decayed and
  // so has the fewest outputs when the pool runs out.
  Harness h(limits(10000));
  const std::uint64_t a = h.add(100, 6000);
  h.step();
  for (int k = 0; k < 10; ++k) h.step();
  const std::uint64_t b = h.add(200, 6000);
  for (int k = 0; k < 700; ++k) h.step();
  const std::uint64_t c = h.add(50, 3000);
  h.step();
  REQUIRE(h.is_prefill());
  REQUIRE(h.plan.scheduled[0].id == c);
  while (h.plan.preempted.empty()) {
    h.step();
    REQUIRE(h.steps < 6000);
  }
  CHECK(h.r(c).output_tokens < h.r(b).output_tokens);
  CHECK(h.r(b).output_tokens < h.r(a).output_tokens);
  REQUIRE(h.plan.preempted.size() == 1);
  CHECK(h.plan.preempted[0] == c);
  // Taken before the step's decode of A and B: one output fewer each.
  const double expected = static_cast<double>(h.r(a).output_tokens - 1 + h.r(b).output_tokens - 1 + 20 * 2) /
                          static_cast<double>(h.r(a).max_output_tokens + h.r(b).max_output_tokens + 1);
  CHECK(h.sched.new_token_ratio() == Approx(std::min(1.0, expected)));
  CHECK(h.sched.running_batch() == std::vector<std::uint64_t>{a, b});  // kept in sorted order
  while (h.sched.has_work()) h.step();
  for (std::uint64_t id : {a, b, c}) {
    CHECK(h.r(id).status == RequestStatus::finished);
    CHECK(h.r(id).output_tokens == h.r(id).max_output_tokens);
  }
}

TEST_CASE("SGLang scheduler: arrivals beyond the context or the pool are aborted and long outputs capped") {
  SglangSchedulerLimits l = limits(1000);
  l.context_length = 4096;
  Harness h(l);
  // max_req_len = min(4096 − 1, 1000 − 1) = 999; max_req_input_len = 994.
  CHECK(h.sched.max_req_len() == 999);
  CHECK(h.sched.max_req_input_len() == 994);
  const std::uint64_t over_context = h.add(100, 4000);  // 4100 >= 4096
  const std::uint64_t too_long = h.add(994, 1);
  const std::uint64_t capped = h.add(900, 500);  // max_new_tokens = min(500, 999 − 900 − 1) = 98
  CHECK(h.r(over_context).status == RequestStatus::aborted);
  CHECK(h.sched.abort_reason(over_context) == SglangAbort::context_length);
  CHECK(h.sched.abort_reason(too_long) == SglangAbort::input_too_long);
  CHECK(h.r(capped).max_output_tokens == 98);
  h.step();
  CHECK(h.plan.aborted == std::vector<std::uint64_t>{over_context, too_long});  // reported once
  while (h.sched.has_work()) h.step();
  CHECK(h.r(capped).output_tokens == 98);
  CHECK(h.aborted.size() == 2);
  CHECK(sglang_abort_name(SglangAbort::decode_out_of_memory) == "decode out of memory");
}

TEST_CASE("SGLang scheduler: limits SGLang refuses to start with") {
  SglangSchedulerLimits l = limits(1000);
  l.page_size = 16;
  CHECK_THROWS_WITH(SglangScheduler(l),
                    "sglang page_size 16: only page_size 1 is modelled (the radix cache here holds single-token pages)");
  l = limits(6);
  CHECK_THROWS_WITH(SglangScheduler(l), "sglang: memory pool size is too small: max_req_input_len = min(context_length "
                                        "1048576 - 1, KV pool 6 - 1) - 5 must be above 0");
  l = limits(1000);
  l.max_running_requests = 0;
  CHECK_THROWS_WITH(SglangScheduler(l), "sglang max_running_requests: expected at least 1, got 0");
  l = limits(1000, 8192, 0);
  CHECK_THROWS_WITH(SglangScheduler(l), "sglang schedule_conservativeness: expected a value above 0, got 0");
}

TEST_CASE("SGLang scheduler: limits from a resolved SglangConfig") {
  SglangConfig c;
  CHECK_THROWS_AS(sglang_scheduler_limits(c, 1000, 10), std::logic_error);
  c.chunked_prefill_size = 4096;
  c.context_length = 8192;
  c.max_prefill_tokens = 2048;
  c.schedule_conservativeness = 0.5;
  const SglangSchedulerLimits l = sglang_scheduler_limits(c, 123456, 321);
  CHECK(l.kv_capacity == 123456);
  CHECK(l.chunked_prefill_size == 4096);
  CHECK(l.context_length == 8192);
  CHECK(l.max_prefill_tokens == 2048);
  CHECK(l.max_running_requests == 321);
  CHECK(l.schedule_conservativeness == 0.5);
  CHECK(l.page_size == 1);
}

TEST_CASE("SGLang scheduler: a last request that cannot get a decode slot is aborted") {
  // SGLang's admission keeps a lone request within the pool (its max_new_tokens is capped at
  // max_req_len − input − 1), so here the serving loop's row is changed after admission to let
  // both requests generate past the pool. retract_decode keeps one request, then aborts it when
  // it alone no longer fits.
  Harness h(limits(200));
  const std::uint64_t a = h.add(20, 10);
  const std::uint64_t b = h.add(30, 10);
  h.step();
  REQUIRE(h.plan.scheduled.size() == 2);
  h.table[a].max_output_tokens = 1000;
  h.table[b].max_output_tokens = 1000;
  std::int64_t retracted_at = -1, aborted_at = -1;
  std::vector<std::uint64_t> aborted;
  while (aborted_at < 0) {
    h.step();
    REQUIRE(h.steps < 1000);
    if (retracted_at < 0 && !h.plan.preempted.empty()) {
      retracted_at = h.steps;
      CHECK(h.plan.preempted == std::vector<std::uint64_t>{b});  // equal outputs: the longer input goes
    }
    if (!h.plan.aborted.empty()) {
      aborted_at = h.steps;
      aborted = h.plan.aborted;
    }
  }
  CHECK(retracted_at > 0);
  CHECK(aborted == std::vector<std::uint64_t>{a});
  CHECK(h.r(a).status == RequestStatus::aborted);
  CHECK(h.sched.abort_reason(a) == SglangAbort::decode_out_of_memory);
  CHECK(h.sched.running_batch().empty());
  // A held every slot of the pool (B's cached prompt was evicted for it); now only A's prompt,
  // unlocked in the tree, remains. The batch is empty, so the step ran nothing and the ratio
  // (0 / (0 + 1) after the abort) was re-initialised as when idle.
  CHECK(h.r(a).computed_tokens == 200);
  CHECK(h.sched.kv_usage().used_tokens == 0);
  CHECK(h.sched.kv_usage().cached_tokens == 20);
  CHECK(h.plan.scheduled.empty());
  CHECK(h.sched.new_token_ratio() == Approx(h.sched.new_token_ratio_schedule().init));
}

TEST_CASE("SGLang scheduler: a dropped step aborts its requests and frees their KV") {
  Harness h(limits(100000));
  h.add(100, 10);
  h.add(50, 10);
  h.plan.clear();
  h.sched.schedule(h.now, h.plan);
  REQUIRE(h.plan.scheduled.size() == 2);
  h.sched.drop_step(h.plan);
  h.sched.check_invariants();
  CHECK(h.r(0).status == RequestStatus::aborted);
  CHECK(h.sched.abort_reason(1) == SglangAbort::dropped_step);
  CHECK(h.sched.kv_usage().used_tokens == 0);
  CHECK_FALSE(h.sched.has_work());
}

namespace {

struct PropertyConfig {
  std::uint64_t seed;
  Tokens capacity;
  std::int64_t chunk;
  std::int64_t max_running;
  double conservativeness;
  int requests;
  Tokens max_prompt;
  Tokens max_output;
};

struct PropertyOutcome {
  std::int64_t steps = 0;
  std::int64_t preemptions = 0;
  std::int64_t aborted = 0;
  std::int64_t decode_aborts = 0;  // retract_decode's last request
  std::int64_t finished = 0;
  Tokens hit_tokens = 0;
};

// A seeded workload through the scheduler with a fake clock: arrivals at random times, prompts
// sharing prefixes from a few "documents" (Mooncake-style hash ids), invariants after every
// schedule and every completion (at every fourth step under the sanitizers), and the rules every
// plan must keep.
PropertyOutcome run_property(const PropertyConfig& pc) {
  Rng rng(pc.seed);
  SglangSchedulerLimits l = limits(pc.capacity, pc.chunk, pc.conservativeness);
  l.max_running_requests = pc.max_running;
  l.max_prefill_tokens = 3000;
  l.context_length = 8192;
  Harness h(l);
  std::vector<Seconds> arrivals;
  Seconds t = 0;
  for (int i = 0; i < pc.requests; ++i) {
    t += rng.exponential(40.0);
    arrivals.push_back(t);
  }
  std::size_t next = 0;
  std::vector<Tokens> trace_output;
  std::vector<std::int64_t> first_admitted;
  std::uint64_t last_first_admission = 0;
  bool any_first = false;
  Tokens sampled = 0;
  PropertyOutcome out;
  while (next < arrivals.size() || h.sched.has_work()) {
    while (next < arrivals.size() && arrivals[next] <= h.now) {
      Tokens prompt = static_cast<Tokens>(rng.uniform_int(1, static_cast<std::uint64_t>(pc.max_prompt)));
      Tokens output = static_cast<Tokens>(rng.uniform_int(1, static_cast<std::uint64_t>(pc.max_output)));
      if (rng.bernoulli(0.005)) prompt = pc.capacity;  // beyond the pool: input too long
      if (rng.bernoulli(0.005)) output = l.context_length;  // beyond the context
      std::vector<std::uint64_t> hashes;
      if (rng.bernoulli(0.6)) {  // a shared document of up to 3 blocks, then a private tail
        const std::uint64_t doc = rng.uniform_int(0, 3);
        const std::uint64_t blocks = rng.uniform_int(1, 3);
        for (std::uint64_t b = 0; b < blocks; ++b) hashes.push_back(doc * 100 + b);
        prompt = std::max<Tokens>(prompt, static_cast<Tokens>(blocks) * 512 - 100);
        hashes.push_back(1000000 + next);  // the private last block
      }
      trace_output.push_back(output);
      h.add(prompt, output, hashes);
      first_admitted.push_back(-1);
      ++next;
    }
    h.plan.clear();
    h.sched.schedule(h.now, h.plan);
    // The invariants after every schedule and completion in Release, at every fourth step under the
    // sanitizers, where their walks over the tree and every request are most of the run; the walk,
    // and so every figure checked below, is the same in both builds.
    const bool full_check = headroom::test::sanitized_every(out.steps, 4);
    if (full_check) h.sched.check_invariants();
    out.aborted += static_cast<std::int64_t>(h.plan.aborted.size());
    if (h.plan.empty()) {
      if (next == arrivals.size() && !h.sched.has_work()) break;  // the last plan only reported aborts
      // Nothing can run: only an arrival can change that.
      REQUIRE(next < arrivals.size());
      REQUIRE(h.sched.running() == 0);
      h.now = std::max(h.now, arrivals[next]);
      continue;
    }
    // The plan keeps the engine's rules.
    const StepPlan& p = h.plan;
    const bool decode = p.scheduled.front().is_decode;
    Tokens prefill_tokens = 0;
    int cut = 0;
    for (const ScheduledRequest& s : p.scheduled) {
      REQUIRE(s.is_decode == decode);  // a step is a prefill batch or a decode batch
      if (decode) {
        REQUIRE(s.new_tokens == 1);
        REQUIRE(s.samples);
      } else {
        prefill_tokens += s.new_tokens;
        if (!s.samples) ++cut;
      }
      if (first_admitted[s.id] < 0) {
        first_admitted[s.id] = h.steps;
        // FCFS: requests start in arrival order.
        if (any_first) REQUIRE(s.id > last_first_admission);
        last_first_admission = s.id;
        any_first = true;
      }
      if (s.samples) ++sampled;
    }
    if (decode) {
      REQUIRE(p.decode_seqs == static_cast<std::int64_t>(h.sched.running_batch().size()));
    } else {
      if (pc.chunk > 0) REQUIRE(prefill_tokens <= pc.chunk);
      REQUIRE(prefill_tokens <= std::max<Tokens>(3000, p.scheduled.front().new_tokens));
      REQUIRE(cut <= 2);  // the chunked request going on, and at most one newly cut
    }
    REQUIRE(h.sched.running() <= pc.max_running);
    const KvUsage kv = h.sched.kv_usage();
    REQUIRE(kv.used_tokens + kv.cached_tokens <= kv.capacity_tokens);
    h.now += 0.001 + 1e-6 * static_cast<double>(p.total_tokens);
    h.finished.clear();
    h.sched.complete_step(p, h.now, h.finished);
    if (full_check) h.sched.check_invariants();
    ++out.steps;
    REQUIRE(out.steps < 2000000);
  }
  // Every request finished with all its (capped) outputs, or was aborted for a documented reason.
  Tokens generated = 0;
  for (std::size_t id = 0; id < h.table.size(); ++id) {
    const RequestState& r = h.table[id];
    generated += r.output_tokens;
    if (r.status == RequestStatus::finished) {
      ++out.finished;
      REQUIRE(r.output_tokens == r.max_output_tokens);
      REQUIRE(r.max_output_tokens <= trace_output[id]);
      REQUIRE(r.first_token_s >= r.arrival_s);
      REQUIRE(r.finish_s >= r.first_token_s);
    } else {
      REQUIRE(r.status == RequestStatus::aborted);
      const SglangAbort why = h.sched.abort_reason(id);
      if (why == SglangAbort::context_length) REQUIRE(r.prompt_tokens + trace_output[id] >= l.context_length);
      else if (why == SglangAbort::input_too_long) REQUIRE(r.prompt_tokens >= h.sched.max_req_input_len());
      else {
        REQUIRE(why == SglangAbort::decode_out_of_memory);
        ++out.decode_aborts;
      }
    }
  }
  REQUIRE(generated == sampled);
  REQUIRE(out.finished + out.aborted == pc.requests);
  const KvUsage kv = h.sched.kv_usage();
  REQUIRE(kv.used_tokens == 0);
  REQUIRE(h.sched.cache().protected_size() == 0);
  REQUIRE(h.sched.cache().request_tokens() == 0);
  out.preemptions = h.sched.counters().preemptions;
  out.hit_tokens = h.sched.counters().prefix_hit_tokens;
  return out;
}

}  // namespace

TEST_CASE("SGLang scheduler: property: a tight pool with chunked prefill and shared prefixes") {
  const PropertyOutcome o = run_property({1, 6000, 512, 64, 1.0, 400, 2500, 400});
  INFO("steps " << o.steps << ", preemptions " << o.preemptions << ", aborted " << o.aborted << ", decode aborts "
                 << o.decode_aborts);
  CHECK(o.steps > 3000);
  CHECK(o.preemptions > 0);  // retracted requests came back and finished (checked inside)
  CHECK(o.hit_tokens > 0);
}

TEST_CASE("SGLang scheduler: property: an optimistic ratio without chunked prefill") {
  const PropertyOutcome o = run_property({2, 9000, -1, 32, 0.3, 400, 3000, 500});
  INFO("steps " << o.steps << ", preemptions " << o.preemptions << ", aborted " << o.aborted << ", decode aborts "
                 << o.decode_aborts);
  CHECK(o.steps > 3000);
  CHECK(o.preemptions > 0);
}

TEST_CASE("SGLang scheduler: property: a roomy pool never retracts") {
  const PropertyOutcome o = run_property({3, 400000, 2048, 256, 1.0, 400, 3000, 500});
  CHECK(o.steps > 1000);
  CHECK(o.preemptions == 0);
  CHECK(o.decode_aborts == 0);
}

