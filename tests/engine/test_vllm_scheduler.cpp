// vLLM v1 scheduler (docs/serving-memory-model.md §1.4): the token budget split over running decodes and
// a chunked prefill, decodes first in the plan, max_num_seqs, preemption of the newest by
// recompute and its resumption, FCFS admission, prefix hits from Mooncake-style hash lists,
// max_model_len, dropped steps, bad limits; and a seeded property run checking the invariants after
// every step (every fourth under the sanitizers) until every request has finished.
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/engine/vllm_scheduler.hpp"
#include "tests/support/sanitizers.hpp"

using namespace headroom;
using namespace headroom::engine;

namespace {

VllmSchedulerLimits limits(std::int64_t batched_tokens, std::int64_t seqs, Tokens block_size, std::uint32_t blocks,
                           bool caching, Tokens max_model_len = 4096) {
  VllmSchedulerLimits l;
  l.max_num_batched_tokens = batched_tokens;
  l.max_num_seqs = seqs;
  l.block_size = block_size;
  l.num_blocks = blocks;
  l.enable_prefix_caching = caching;
  l.max_model_len = max_model_len;
  return l;
}

// A serving loop without the GPU: requests arrive into the table, each step is planned, checked,
// and completed `dt` later.
struct Loop {
  RequestTable table;
  std::deque<std::vector<std::uint64_t>> hashes;  // each request's prefix hashes, as given
  VllmScheduler sched;
  StepPlan plan;
  std::vector<std::uint64_t> finished;
  std::vector<std::uint64_t> reported_aborted;  // every plan's `aborted`, in order
  Seconds now = 0;

  explicit Loop(const VllmSchedulerLimits& l) : sched(l) { sched.attach(&table); }

  std::uint64_t arrive(Tokens prompt, Tokens output, std::vector<std::uint64_t> prefix = {}) {
    RequestState r;
    r.id = table.size();
    r.arrival_s = now;
    r.prompt_tokens = prompt;
    r.max_output_tokens = output;
    hashes.push_back(std::move(prefix));
    r.prefix_hashes = hashes.back();
    r.prefix_block_tokens = hashes.back().empty() ? 0 : workload::kMooncakeBlockTokens;
    table.push_back(r);
    sched.add_request(r.id);
    return r.id;
  }

  // Plans one step, checks the invariants with the step in flight and after it completes.
  const StepPlan& step(Seconds dt = 0.01) {
    sched.schedule(now, plan);
    sched.check_invariants();
    reported_aborted.insert(reported_aborted.end(), plan.aborted.begin(), plan.aborted.end());
    finished.clear();
    now += dt;
    if (!plan.empty()) sched.complete_step(plan, now, finished);
    sched.check_invariants();
    return plan;
  }

  void run_to_end(int max_steps = 100000) {
    for (int i = 0; sched.has_work(); ++i) {
      REQUIRE(i < max_steps);
      const StepPlan& p = step();
      REQUIRE((!p.empty() || !p.aborted.empty()));
    }
  }
};

std::vector<std::uint64_t> ids_of(const StepPlan& plan) {
  std::vector<std::uint64_t> ids;
  for (const ScheduledRequest& s : plan.scheduled) ids.push_back(s.id);
  return ids;
}

void require_entry(const ScheduledRequest& s, std::uint64_t id, Tokens new_tokens, Tokens context, bool decode,
                   bool samples) {
  INFO("request " << s.id);
  CHECK(s.id == id);
  CHECK(s.new_tokens == new_tokens);
  CHECK(s.context_tokens == context);
  CHECK(s.is_decode == decode);
  CHECK(s.samples == samples);
}

}  // namespace

TEST_CASE("vLLM scheduler: the token budget is split over running decodes and a chunked prefill") {
  Loop loop(limits(64, 8, 16, 101, false));
  const auto a = loop.arrive(10, 5), b = loop.arrive(10, 5);
  const StepPlan& p1 = loop.step();
  REQUIRE(p1.seqs() == 2);
  require_entry(p1.scheduled[0], a, 10, 0, false, true);
  require_entry(p1.scheduled[1], b, 10, 0, false, true);
  CHECK(p1.total_tokens == 20);

  const auto c = loop.arrive(200, 3);
  // Running decodes take one token each; the new prompt gets the 62 left and samples nothing.
  const StepPlan& p2 = loop.step();
  REQUIRE(p2.seqs() == 3);
  require_entry(p2.scheduled[0], a, 1, 10, true, true);
  require_entry(p2.scheduled[1], b, 1, 10, true, true);
  require_entry(p2.scheduled[2], c, 62, 0, false, false);
  CHECK(p2.total_tokens == 64);
  CHECK(p2.decode_seqs == 2);

  const StepPlan& p3 = loop.step();
  REQUIRE(p3.seqs() == 3);
  require_entry(p3.scheduled[2], c, 62, 62, false, false);
  CHECK(p3.total_tokens == 64);
  const StepPlan& p4 = loop.step();
  require_entry(p4.scheduled[2], c, 62, 124, false, false);
  // The last 14 prompt tokens end the prefill: the step samples C's first token, and A and B
  // reach their 5 outputs.
  const StepPlan& p5 = loop.step();
  require_entry(p5.scheduled[0], a, 1, 13, true, true);
  require_entry(p5.scheduled[2], c, 14, 186, false, true);
  CHECK(p5.total_tokens == 16);
  CHECK(loop.finished == std::vector<std::uint64_t>{a, b});
  CHECK(loop.table[a].status == RequestStatus::finished);
  CHECK(loop.table[a].output_tokens == 5);
  CHECK(loop.table[c].output_tokens == 1);
  CHECK(loop.table[c].first_token_s == Approx(0.05));
  CHECK(loop.sched.running() == 1);
  loop.run_to_end();
  CHECK(loop.table[c].output_tokens == 3);
  CHECK(loop.sched.kv_usage().used_tokens == 0);
}

TEST_CASE("vLLM scheduler: decodes lead the plan and long_prefill_token_threshold caps a chunk") {
  VllmSchedulerLimits l = limits(40, 8, 16, 101, false);
  l.long_prefill_token_threshold = 16;
  Loop loop(l);
  const auto c = loop.arrive(100, 2), d = loop.arrive(4, 3);
  const StepPlan& p1 = loop.step();
  REQUIRE(p1.seqs() == 2);
  require_entry(p1.scheduled[0], c, 16, 0, false, false);
  require_entry(p1.scheduled[1], d, 4, 0, false, true);
  // C runs ahead of D in the running queue, but D's decode comes first in the batch.
  CHECK(loop.sched.running_queue() == std::vector<std::uint64_t>{c, d});
  const StepPlan& p2 = loop.step();
  REQUIRE(p2.seqs() == 2);
  require_entry(p2.scheduled[0], d, 1, 4, true, true);
  require_entry(p2.scheduled[1], c, 16, 16, false, false);
  CHECK(p2.decode_seqs == 1);
  loop.run_to_end();
  CHECK(loop.table[c].output_tokens == 2);
  CHECK(loop.table[d].output_tokens == 3);
}

TEST_CASE("vLLM scheduler: admission stops at max_num_seqs") {
  Loop loop(limits(1000, 2, 16, 101, false));
  const auto a = loop.arrive(10, 3), b = loop.arrive(10, 3), c = loop.arrive(10, 3);
  CHECK(loop.sched.waiting() == 3);
  CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{a, b});
  CHECK(loop.sched.running() == 2);
  CHECK(loop.sched.waiting() == 1);
  // Plenty of budget and KV left, but two requests already run.
  CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{a, b});
  CHECK(loop.table[c].status == RequestStatus::waiting);
  CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{a, b});
  CHECK(loop.finished == std::vector<std::uint64_t>{a, b});
  CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{c});
  loop.run_to_end();
  CHECK(loop.table[c].output_tokens == 3);
}

TEST_CASE("vLLM scheduler: the newest request is preempted when blocks run out and resumes and finishes") {
  // 6 usable blocks of 4 tokens: two 8-token prompts fill them after four decodes each.
  Loop loop(limits(100, 8, 4, 7, true, 64));
  const auto a = loop.arrive(8, 8), b = loop.arrive(8, 8);
  for (int i = 0; i < 4; ++i) CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{a, b});
  CHECK(loop.sched.kv_usage().used_tokens == 24);  // 3 blocks each: 11 tokens computed
  // C arrives; no block is free for it, so it waits (its one block would have to come from B).
  const auto c = loop.arrive(4, 1);
  CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{a, b});
  CHECK(loop.table[c].status == RequestStatus::waiting);

  // A's 13th token needs a 4th block: B, the newest, is preempted by recompute and goes in
  // front of C; nothing is admitted in a step that preempted.
  const StepPlan& p = loop.step();
  CHECK(ids_of(p) == std::vector<std::uint64_t>{a});
  CHECK(p.preempted == std::vector<std::uint64_t>{b});
  const RequestState& rb = loop.table[b];
  CHECK(rb.status == RequestStatus::preempted);
  CHECK(rb.computed_tokens == 0);
  CHECK(rb.output_tokens == 5);
  CHECK(rb.preemptions == 1);
  CHECK(loop.sched.counters().preemptions == 1);
  CHECK(loop.sched.waiting_queue() == std::vector<std::uint64_t>{b, c});
  CHECK(loop.sched.kv_cache().block_table(b).empty());

  // B cannot get its 4 blocks back while A runs, and C, behind it, does not jump the queue.
  CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{a});
  CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{a});
  CHECK(loop.finished == std::vector<std::uint64_t>{a});
  CHECK(loop.table[c].status == RequestStatus::waiting);

  // B resumes: its first two blocks are still cached, the rest (prompt and 5 outputs) is
  // recomputed, and that step samples its 6th token.
  const StepPlan& r = loop.step();
  REQUIRE(r.seqs() == 2);
  require_entry(r.scheduled[0], b, 5, 8, false, true);
  require_entry(r.scheduled[1], c, 4, 0, false, true);
  CHECK(rb.output_tokens == 6);
  CHECK(rb.cached_tokens == 0);  // set at the first admission only
  loop.run_to_end();
  CHECK(rb.status == RequestStatus::finished);
  CHECK(rb.output_tokens == 8);
  CHECK(rb.preemptions == 1);
  CHECK(loop.table[c].output_tokens == 1);
  CHECK(loop.sched.counters().prefix_hit_tokens == 0);  // resumed requests are not counted
}

TEST_CASE("vLLM scheduler: the newest request preempts itself when it is the one short of a block") {
  // 3 usable blocks of 4 tokens: A's 6-token prompt takes 2, B's 4-token prompt the third.
  Loop loop(limits(100, 8, 4, 4, false, 64));
  const auto a = loop.arrive(6, 6), b = loop.arrive(4, 3);
  CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{a, b});
  // A's 7th token fits its second block; B's 5th needs a block, and B is the newest.
  const StepPlan& p = loop.step();
  CHECK(ids_of(p) == std::vector<std::uint64_t>{a});
  CHECK(p.preempted == std::vector<std::uint64_t>{b});
  CHECK(loop.table[b].status == RequestStatus::preempted);
  CHECK(loop.table[b].output_tokens == 1);
  // B's 5 tokens need 2 blocks; 1 is free.
  CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{a});
  CHECK(loop.table[b].status == RequestStatus::preempted);
  loop.run_to_end();
  CHECK(loop.table[a].output_tokens == 6);
  CHECK(loop.table[b].output_tokens == 3);
  CHECK(loop.table[b].preemptions == 1);
  CHECK(loop.table[a].preemptions == 0);
}

TEST_CASE("vLLM scheduler: a steady decode batch goes on from its last plan and preempts at a block boundary") {
  // 3 usable blocks of 4 tokens: A's 6-token prompt takes 2, B's 3-token prompt the third. Once
  // both decode, each next plan starts from the last one (the steady path); B's 5th token is the
  // first that needs a block, none is free, and B, the newest, preempts itself. With and without
  // prefix caching (whose hashed full blocks change when a decode needs the cache).
  for (bool caching : {false, true}) {
    INFO("prefix caching " << caching);
    Loop loop(limits(100, 8, 4, 4, caching, 64));
    const auto a = loop.arrive(6, 4), b = loop.arrive(3, 4);
    CHECK(ids_of(loop.step()) == std::vector<std::uint64_t>{a, b});  // both prefills sample a token
    const StepPlan& p2 = loop.step();
    REQUIRE(p2.seqs() == 2);
    require_entry(p2.scheduled[0], a, 1, 6, true, true);
    require_entry(p2.scheduled[1], b, 1, 3, true, true);
    const StepPlan& p3 = loop.step();
    REQUIRE(p3.seqs() == 1);
    require_entry(p3.scheduled[0], a, 1, 7, true, true);
    CHECK(p3.total_tokens == 1);
    CHECK(p3.decode_seqs == 1);
    CHECK(p3.preempted == std::vector<std::uint64_t>{b});
    CHECK(loop.table[b].status == RequestStatus::preempted);
    CHECK(loop.table[b].output_tokens == 2);
    // A's 9th token takes the block B gave back; B waits for 2 blocks.
    const StepPlan& p4 = loop.step();
    REQUIRE(p4.seqs() == 1);
    require_entry(p4.scheduled[0], a, 1, 8, true, true);
    CHECK(loop.table[b].status == RequestStatus::preempted);
    CHECK(loop.table[a].computed_tokens == 9);
    CHECK(loop.finished == std::vector<std::uint64_t>{a});  // its 4th output
    loop.run_to_end();
    CHECK(loop.table[b].status == RequestStatus::finished);
    CHECK(loop.table[b].output_tokens == 4);
    CHECK(loop.table[b].preemptions == 1);
  }
}

TEST_CASE("vLLM scheduler: new requests are admitted in arrival order") {
  Loop loop(limits(16, 100, 16, 200, false));
  for (int i = 0; i < 6; ++i) loop.arrive(16, 2);
  std::vector<std::uint64_t> admitted;
  while (loop.sched.has_work()) {
    for (std::uint64_t id : ids_of(loop.step()))
      if (std::find(admitted.begin(), admitted.end(), id) == admitted.end()) admitted.push_back(id);
    // The requests still waiting are the latest arrivals, in order.
    const std::vector<std::uint64_t> waiting = loop.sched.waiting_queue();
    for (std::size_t i = 0; i < waiting.size(); ++i) CHECK(waiting[i] == 6 - waiting.size() + i);
  }
  CHECK(admitted == std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5});
  for (std::uint64_t id = 1; id < 6; ++id) CHECK(loop.table[id].first_scheduled_s >= loop.table[id - 1].first_scheduled_s);
}

TEST_CASE("vLLM scheduler: prefix hits from shared Mooncake hash lists") {
  Loop loop(limits(4096, 16, 16, 1000, true, 8192));
  const auto a = loop.arrive(1100, 5, {7, 8, 9});
  loop.step();
  CHECK(loop.table[a].cached_tokens == 0);
  // B shares A's first two 512-token blocks (hash ids 7, 8): 64 blocks of 16 hit.
  const auto b = loop.arrive(1300, 2, {7, 8, 10});
  const StepPlan& p = loop.step();
  REQUIRE(p.seqs() == 2);
  require_entry(p.scheduled[0], a, 1, 1100, true, true);
  require_entry(p.scheduled[1], b, 276, 1024, false, true);
  CHECK(loop.table[b].cached_tokens == 1024);
  // A holds 69 blocks, B 82, of which 64 are A's.
  CHECK(loop.sched.kv_usage().used_tokens == (69 + 82 - 64) * 16);
  // A hash chain breaks at its first id: nothing is shared past a differing block.
  const auto d = loop.arrive(600, 1, {99, 8});
  // The same prompt as A hits every full block but keeps the last token to compute:
  // 1099 tokens at most, 68 blocks.
  const auto e = loop.arrive(1100, 1, {7, 8, 9});
  loop.step();
  CHECK(loop.table[d].cached_tokens == 0);
  CHECK(loop.table[e].cached_tokens == 1088);
  CHECK(loop.sched.counters().prefix_query_tokens == 1100 + 1300 + 600 + 1100);
  CHECK(loop.sched.counters().prefix_hit_tokens == 1024 + 1088);
  loop.run_to_end();
  // Everything freed; the hashed blocks stay cached and evictable.
  const KvUsage u = loop.sched.kv_usage();
  CHECK(u.used_tokens == 0);
  CHECK(u.capacity_tokens == 999 * 16);
  CHECK(u.cached_tokens == static_cast<Tokens>(loop.sched.kv_cache().num_cached_blocks()) * 16);
  CHECK(u.cached_tokens > 0);

  SECTION("with prefix caching off nothing hits") {
    Loop off(limits(4096, 16, 16, 1000, false, 8192));
    off.arrive(1100, 5, {7, 8, 9});
    off.step();
    const auto b2 = off.arrive(1300, 2, {7, 8, 10});
    off.step();
    CHECK(off.table[b2].cached_tokens == 0);
    CHECK(off.sched.counters().prefix_hit_tokens == 0);
    off.run_to_end();
    CHECK(off.sched.kv_usage().cached_tokens == 0);
  }
}

TEST_CASE("vLLM scheduler: max_model_len caps outputs and turns away prompts that reach it") {
  Loop loop(limits(100, 8, 16, 3, false, 32));  // 2 usable blocks: 32 tokens
  const auto capped = loop.arrive(20, 100);
  const auto at_limit = loop.arrive(32, 1);
  const auto empty = loop.arrive(0, 5);
  const auto fits = loop.arrive(16, 17);  // 32 tokens, of which 31 are ever fed: 2 blocks
  CHECK(loop.table[at_limit].status == RequestStatus::aborted);
  CHECK(loop.table[empty].status == RequestStatus::aborted);
  CHECK(loop.sched.waiting() == 2);
  // The rejected requests are reported with the next plan, once.
  CHECK(loop.step().aborted == std::vector<std::uint64_t>{at_limit, empty});
  CHECK(loop.step().aborted.empty());
  loop.run_to_end();
  CHECK(loop.table[capped].output_tokens == 12);  // 20 + 12 = max_model_len (check_stop)
  CHECK(loop.table[capped].status == RequestStatus::finished);
  CHECK(loop.table[fits].output_tokens == 16);

  SECTION("a request whose KV can never fit is turned away") {
    Loop small(limits(100, 8, 16, 3, false, 64));
    const auto big = small.arrive(30, 4);  // 33 tokens fed: 3 blocks of the 2 there are
    const auto ok = small.arrive(30, 3);   // 32 tokens fed: 2 blocks
    CHECK(small.table[big].status == RequestStatus::aborted);
    CHECK(small.table[ok].status == RequestStatus::waiting);
    small.run_to_end();
    CHECK(small.reported_aborted == std::vector<std::uint64_t>{big});
    CHECK(small.table[ok].output_tokens == 3);
  }
}

TEST_CASE("vLLM scheduler: a dropped step aborts its requests and frees their blocks") {
  Loop loop(limits(24, 8, 16, 101, true));
  const auto a = loop.arrive(10, 4), b = loop.arrive(10, 4), c = loop.arrive(10, 4);
  loop.sched.schedule(0, loop.plan);
  CHECK(ids_of(loop.plan) == std::vector<std::uint64_t>{a, b, c});  // C gets the last 4 tokens
  loop.sched.drop_step(loop.plan);
  loop.sched.check_invariants();
  CHECK(loop.table[a].status == RequestStatus::aborted);
  CHECK(loop.table[c].status == RequestStatus::aborted);
  CHECK(loop.sched.running() == 0);
  CHECK(loop.sched.kv_usage().used_tokens == 0);
  CHECK_FALSE(loop.sched.has_work());
  const auto d = loop.arrive(10, 2);
  loop.run_to_end();
  CHECK(loop.table[d].output_tokens == 2);
  CHECK(loop.table[b].output_tokens == 0);
}

TEST_CASE("vLLM scheduler: bad limits and misuse") {
  auto message = [](VllmSchedulerLimits l) {
    try {
      VllmScheduler s(l);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  VllmSchedulerLimits l = limits(2048, 128, 16, 100, true);
  l.max_num_seqs = 0;
  CHECK(message(l) == "vLLM scheduler: max_num_seqs must be at least 1, got 0");
  l = limits(0, 128, 16, 100, true);
  CHECK(message(l) == "vLLM scheduler: max_num_batched_tokens must be at least 1, got 0");
  l = limits(2048, 128, 0, 100, true);
  CHECK(message(l) == "vLLM scheduler: block_size must be at least 1, got 0");
  l = limits(2048, 128, 16, 1, true);
  CHECK(message(l) == "vLLM scheduler: num_blocks (block 0 is the null block) must be at least 2, got 1");
  l = limits(2048, 128, 16, 100, true, 0);
  CHECK(message(l) == "vLLM scheduler: max_model_len must be at least 1, got 0");
  l = limits(2048, 128, 16, 100, true);
  l.long_prefill_token_threshold = -1;
  CHECK(message(l) == "vLLM scheduler: long_prefill_token_threshold must be at least 0, got -1");

  VllmConfig c;
  CHECK_THROWS_WITH(vllm_scheduler_limits(c, 100),
                    "vllm_scheduler_limits: the VllmConfig is not resolved (call resolve() first)");
  c.max_num_batched_tokens = 8192;
  c.max_num_seqs = 1024;
  c.block_size = 16;
  c.max_model_len = 131072;
  c.enable_prefix_caching = false;
  const VllmSchedulerLimits from_config = vllm_scheduler_limits(c, 30000);
  CHECK(from_config.max_num_batched_tokens == 8192);
  CHECK(from_config.max_num_seqs == 1024);
  CHECK(from_config.block_size == 16);
  CHECK(from_config.num_blocks == 30000);
  CHECK(from_config.max_model_len == 131072);
  CHECK_FALSE(from_config.enable_prefix_caching);
  CHECK_FALSE(from_config.long_prefill_token_threshold);
  CHECK_THROWS_WITH(vllm_scheduler_limits(c, 5000000000), "vLLM scheduler: num_blocks 5000000000 does not fit in 32 bits");

  Loop loop(limits(64, 8, 16, 101, true));
  StepPlan stray;
  CHECK_THROWS_WITH(loop.sched.complete_step(stray, 0, loop.finished),
                    "VllmScheduler: complete_step with a plan this scheduler did not just make");
  CHECK_THROWS_WITH(loop.sched.add_request(3), "VllmScheduler: request 3 is not in the request table");
  const auto a = loop.arrive(10, 2);
  CHECK_THROWS_WITH(loop.sched.add_request(a), "VllmScheduler: request 0 was added twice or is not a new request");
  loop.sched.schedule(0, loop.plan);
  CHECK_THROWS_WITH(loop.sched.schedule(0, loop.plan),
                    "VllmScheduler: schedule called before the previous step completed or was dropped");
}

TEST_CASE("vLLM scheduler: random traffic keeps every invariant and every request finishes") {
  struct Case {
    const char* name;
    VllmSchedulerLimits limits;
    std::uint64_t seed;
    int requests;  // fewer where KV admits only a few at a time
  };
  VllmSchedulerLimits threshold = limits(512, 64, 16, 129, true, 2048);
  threshold.long_prefill_token_threshold = 128;
  const Case cases[] = {
      {"tight pool", limits(256, 16, 16, 65, true, 1024), 11, 250},
      {"long prefill threshold", threshold, 12, 250},
      {"caching off, 8-token blocks", limits(128, 8, 8, 50, false, 256), 13, 400},
      {"roomy", limits(2048, 256, 16, 1000, true, 4096), 14, 800},
  };
  for (const Case& k : cases) {
    SECTION(k.name) {
      const VllmSchedulerLimits& l = k.limits;
      Rng rng(k.seed);
      // Eight documents of 16 hash ids; most prompts start with one of them (Mooncake hash_ids
      // name 512-token blocks).
      std::vector<std::vector<std::uint64_t>> docs(8);
      for (auto& d : docs)
        for (int i = 0; i < 16; ++i) d.push_back(rng.next_u64());

      Loop loop(l);
      const int n = k.requests;
      std::vector<Seconds> arrivals;
      Seconds t = 0;
      for (int i = 0; i < n; ++i) arrivals.push_back(t += rng.exponential(40.0));
      std::vector<Tokens> expected;  // outputs each accepted request must end with; -1 rejected
      Tokens expected_total = 0, prompts = 0;
      std::int64_t steps = 0, preemptions_seen = 0;
      Tokens sampled = 0;
      std::size_t next = 0;
      while (next < arrivals.size() || loop.sched.has_work()) {
        while (next < arrivals.size() && arrivals[next] <= loop.now) {
          // A few prompts reach max_model_len and are turned away; some outputs run into it.
          const auto prompt = static_cast<Tokens>(rng.uniform_int(1, static_cast<std::uint64_t>(l.max_model_len + 40)));
          const auto output = static_cast<Tokens>(rng.uniform_int(1, 300));
          std::vector<std::uint64_t> prefix;
          if (rng.bernoulli(0.6)) {
            const auto& d = docs[rng.uniform_int(0, docs.size() - 1)];
            const auto blocks = static_cast<std::size_t>((prompt + 511) / 512);
            prefix.assign(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(blocks, d.size())));
          }
          loop.now = std::max(loop.now, arrivals[next]);
          const auto id = loop.arrive(prompt, output, std::move(prefix));
          ++next;
          if (prompt >= l.max_model_len) {
            CHECK(loop.table[id].status == RequestStatus::aborted);
            expected.push_back(-1);
            continue;
          }
          expected.push_back(std::min(output, l.max_model_len - prompt));
          expected_total += expected.back();
          prompts += prompt;
        }
        loop.sched.schedule(loop.now, loop.plan);
        // Every step's invariants in Release; every fourth step's under the sanitizers, where the
        // checks' walks over every block and request are most of a 35 s test.
        const bool check = headroom::test::sanitized_every(steps, 4);
        if (check) loop.sched.check_invariants();
        const StepPlan& p = loop.plan;
        loop.reported_aborted.insert(loop.reported_aborted.end(), p.aborted.begin(), p.aborted.end());
        REQUIRE(p.total_tokens <= l.max_num_batched_tokens);
        REQUIRE(p.seqs() <= l.max_num_seqs);
        preemptions_seen += static_cast<std::int64_t>(p.preempted.size());
        if (p.empty()) {
          // Nothing runnable can only mean nothing is there yet.
          REQUIRE_FALSE(loop.sched.has_work());
          REQUIRE(next < arrivals.size());
          loop.now = arrivals[next];
          continue;
        }
        loop.now += 0.004 + 2e-5 * static_cast<double>(p.total_tokens);
        loop.finished.clear();
        loop.sched.complete_step(p, loop.now, loop.finished);
        if (check) loop.sched.check_invariants();
        for (const ScheduledRequest& s : p.scheduled) sampled += s.samples ? 1 : 0;
        REQUIRE(++steps < 2000000);
      }
      INFO(k.name << ": " << steps << " steps, " << preemptions_seen << " preemptions");
      CHECK(steps > 2000);
      CHECK(preemptions_seen == loop.sched.counters().preemptions);
      Tokens outputs = 0, cached = 0;
      for (std::size_t id = 0; id < loop.table.size(); ++id) {
        const RequestState& r = loop.table[id];
        if (expected[id] < 0) continue;
        INFO("request " << id);
        REQUIRE(r.status == RequestStatus::finished);
        CHECK(r.output_tokens == expected[id]);
        CHECK(r.arrival_s <= r.first_scheduled_s);
        CHECK(r.first_scheduled_s < r.first_token_s);
        CHECK(r.first_token_s <= r.finish_s);
        outputs += r.output_tokens;
        cached += r.cached_tokens;
        // New requests are admitted in arrival order.
        if (id > 0 && expected[id - 1] >= 0) CHECK(loop.table[id - 1].first_scheduled_s <= r.first_scheduled_s);
      }
      CHECK(outputs == expected_total);
      std::vector<std::uint64_t> rejected;
      for (std::size_t id = 0; id < expected.size(); ++id)
        if (expected[id] < 0) rejected.push_back(id);
      CHECK(loop.reported_aborted == rejected);
      CHECK(sampled == expected_total);
      CHECK(loop.sched.counters().prefix_hit_tokens == cached);
      CHECK(loop.sched.counters().prefix_query_tokens == prompts);
      if (l.enable_prefix_caching) CHECK(cached > 0);
      else CHECK(cached == 0);
      CHECK(loop.sched.kv_usage().used_tokens == 0);
      if (l.num_blocks == 65) CHECK(loop.sched.counters().preemptions > 0);  // the tight pool preempts
    }
  }
}
