// SGLang's SWA KV pool for gpt-oss and Llama 4 (docs/serving-memory-model.md §2.2):
// set_num_tokens_hybrid_swa's split, SWAKVPool's tensors and index map, FA3's graph metadata (with
// Llama 4's local-attention tables), the attention backend SGLang picks for these models, and the
// scheduler's two pools (admission against both, SWA slots freed as they leave the window), with
// the ChunkCache and with SWARadixCache (sgl-project/sglang @99fab2ce6), invariants after every step.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/sglang_scheduler.hpp"
#include "sim/engine/startup.hpp"
#include "tests/engine/deployment_on.hpp"
#include "tests/engine/scheduler_harness.hpp"
#include "tests/support/allocation_counter.hpp"

using namespace headroom;
using namespace headroom::engine;

using headroom::engine::test::on;

namespace {

SglangSchedulerLimits swa_limits(Tokens full, Tokens swa, Tokens window, std::int64_t chunk = 8192,
                                 bool radix = false) {
  SglangSchedulerLimits l;
  l.kv_capacity = full;
  l.chunked_prefill_size = chunk;
  l.max_prefill_tokens = 16384;
  l.max_running_requests = 1000;
  l.context_length = 1 << 20;
  l.disable_radix_cache = !radix;
  l.swa_capacity = swa;
  l.sliding_window = window;
  return l;
}

using SwaHarness = headroom::engine::test::SchedulerHarness<SglangScheduler>;

SglangConfig chunk_cache() {
  SglangConfig c;
  c.disable_radix_cache = true;
  return c;
}

}  // namespace

TEST_CASE("SGLang SWA split: gpt-oss-20b's 12 + 12 layers, 1,000,000 tokens -> 1,111,111 full, 888,888 SWA") {
  // set_num_tokens_hybrid_swa: int(24,000,000 / (0.8 × 12 + 12)) = int(1,111,111.1), int(× 0.8).
  CHECK(sglang_hybrid_swa_tokens(1000000, 12, 12, 0.8, 1) == SglangSwaTokens{1111111, 888888});
  // ratio 0.5, page 64: int(24e6 / 18) = 1,333,333 -> 1,333,312; int(666,666.5) = 666,666 -> 666,624.
  CHECK(sglang_hybrid_swa_tokens(1000000, 12, 12, 0.5, 64) == SglangSwaTokens{1333312, 666624});
  // ratio 1: the same tokens in both pools.
  CHECK(sglang_hybrid_swa_tokens(1000, 18, 18, 1.0, 1) == SglangSwaTokens{1000, 1000});
}

TEST_CASE("SGLang FA3 graph metadata: 256 graphs of a 131,072-token context, with the SWA page table") {
  // cache_seqlens int32 [256]; cu_seqlens_q/k int32 [257]; page_table int32 [256, 131072] = 128 MiB;
  // strided_indices int64 [131072] = 1 MiB; swa_page_table like page_table.
  CHECK(sglang_fa3_graph_buffers(256, 131072, 1, true) ==
        std::vector<Bytes>{1024, 1028, 1028, 134217728, 1048576, 134217728});
  CHECK(sglang_fa3_graph_buffers(8, 1000, 64, false) == std::vector<Bytes>{32, 36, 36, 8 * 16 * 4, 16 * 8});
}

TEST_CASE("SGLang FA3 graph metadata with attention_chunk_size: max_bs x ceil(context / chunk) virtual batches") {
  // Llama 4, 512 graphs, context 32,768, chunk 8,192: V = 512 × 4 = 2,048; local_query_start_loc
  // int32 [2,049], local_seqused_k int32 [2,048], local_block_table int32 [2,048, 8,192] = 64 MiB,
  // after strided_indices and before swa_page_table.
  CHECK(sglang_fa3_graph_buffers(512, 32768, 1, true, 8192) ==
        std::vector<Bytes>{2048, 2052, 2052, 67108864, 262144, 8196, 8192, 67108864, 67108864});
  // Page 64, context 1,000, chunk 256: 16 pages, V = 8 × 4 = 32 of ceil(256 / 64) = 4 pages.
  CHECK(sglang_fa3_graph_buffers(8, 1000, 64, false, 256) ==
        std::vector<Bytes>{32, 36, 36, 8 * 16 * 4, 16 * 8, 33 * 4, 32 * 4, 32 * 4 * 4});
}

TEST_CASE("SGLang Llama-4-Scout at TP 4 on an H100, context 32,768: 36 chunked layers in the SWA pool") {
  SglangConfig c = chunk_cache();
  c.context_length = 32768;
  StartupResult r = sglang_startup(on("h100-sxm-80gb", "Llama-4-Scout-17B-16E-Instruct", 4), c);
  INFO(r.failure);
  REQUIRE(r.ok);
  CHECK(std::get<SglangConfig>(r.config).attention_backend == SglangAttentionBackend::fa3);
  const auto& f = std::get<SglangFigures>(r.figures);
  // cell_size over all 48 layers: 8 KV heads / TP 4 × (128 + 128) × 48 × 2 bytes.
  CHECK(f.cell_size == 49152);
  const auto profiled = static_cast<std::int64_t>(f.rest_memory / 49152.0);
  // 195,601 profiled tokens (what --disable-hybrid-swa-memory gets; 304,828 before the float32
  // rotary cos_sin_cache [10485760, 128] of the 36 RoPE layers, 5 GiB, was allocated among the
  // weights, serving-memory-model.md §10): full = int(195,601 × 48 / (0.8 × 36 + 12)) =
  // int(230,118.8) = 230,118, swa = int(230,118 × 0.8) = 184,094.
  CHECK(profiled == 195601);
  CHECK(r.kv_tokens == 230118);
  CHECK(f.swa_tokens == 184094);
  CHECK(f.full_layers == 12);
  CHECK(f.swa_layers == 36);
  CHECK(f.swa_layers_chunked);
  CHECK(f.sliding_window == 8192);  // model_runner.py: sliding_window_size = attention_chunk_size
  // clamp(int(195,601 / 32,768 × 512), 2048, 4096) = 3,056 rows, sized before the split.
  CHECK(f.max_num_reqs == 3056);
  // 24 full-layer tensors [230,119, 2, 128], 72 chunked-layer tensors [184,095, 2, 128], the map.
  REQUIRE(r.memory.kv_cache.size() == 97);
  CHECK(r.memory.kv_cache[0]->requested_size == Bytes{230119} * 512);
  CHECK(r.memory.kv_cache[24]->requested_size == Bytes{184095} * 512);
  CHECK(r.memory.kv_cache[96]->requested_size == Bytes{230120} * 8);
  // 52 graph sizes up to 512 (§2.1 table at TP 4 on 80 GB); FA3's metadata as in the case above:
  // 2,048 + 2 × 2,052 + 3 × 64 MiB + 256 KiB + 8,196 + 8,192 = 201,611,276 bytes asked, the
  // caching allocator's 512-byte rounding of 2,052, 2,052 and 8,196 adds 3 × 508.
  CHECK(r.graph_batch_sizes.size() == 52);
  CHECK(r.graph_batch_sizes.back() == 512);
  CHECK(r.bytes.workspaces == 201611276 + 3 * 508);
}

TEST_CASE("SGLang Llama 4: SWARadixCache by default, version 0.4 with it and non-Hopper GPUs are errors, one pool without the pool split") {
  const char* scout = "Llama-4-Scout-17B-16E-Instruct";
  // The default flags: SWARadixCache on the two pools (current); version 0.4 predates the pool and the cache.
  SglangConfig radix;
  radix.context_length = 32768;
  StartupResult with_radix = sglang_startup(on("h100-sxm-80gb", scout, 4), radix);
  INFO(with_radix.failure);
  REQUIRE(with_radix.ok);
  CHECK(with_radix.kv_tokens == 230118);
  SglangConfig old;
  old.version = SglangVersion::v0_4;
  CHECK_THROWS_WITH(resolve(old, on("h100-sxm-80gb", scout, 4)),
                    Catch::Contains("'Llama-4-Scout-17B-16E-Instruct' (llama4) on SGLang 0.4 (v0.4.6) is not modelled: "
                                    "that release predates SWARadixCache (PR #7367, v0.4.9.post2) and the SWA KV pool"));
  old.disable_radix_cache = true;  // no flag makes v0.4.6 a model of the SWA pool
  CHECK_THROWS_WITH(resolve(old, on("h100-sxm-80gb", scout, 4)), Catch::Contains("on SGLang 0.4 (v0.4.6) is not modelled"));
  SglangConfig a100 = chunk_cache();
  CHECK_THROWS_WITH(resolve(a100, on("a100-80gb", scout, 4)),
                    Catch::Contains("(llama4) runs on triton here, which is not modelled; SGLang serves Llama 4 on fa3, "
                                    "aiter, triton, ascend, trtllm_mha or intel_xpu"));
  // --disable-hybrid-swa-memory: one MHA pool over all 48 layers, the profiled 195,601 tokens (the
  // 5 GiB float32 rotary cache allocated, §10), and still fa3 with the local-attention tables but no
  // swa_page_table.
  SglangConfig one;
  one.disable_hybrid_swa_memory = true;
  one.context_length = 32768;
  StartupResult r = sglang_startup(on("h100-sxm-80gb", scout, 4), one);
  REQUIRE(r.ok);
  CHECK(std::get<SglangFigures>(r.figures).swa_tokens == 0);
  CHECK(r.kv_tokens == 195601);
  CHECK(r.memory.kv_cache.size() == 96);
  CHECK(r.bytes.workspaces == 201611276 + 3 * 508 - 67108864);
}

TEST_CASE("SGLang gpt-oss-20b on an H100 with --disable-radix-cache: fa3, 1.11x full and 0.89x SWA tokens") {
  SglangConfig c = chunk_cache();
  StartupResult r = sglang_startup(on("h100-sxm-80gb", "gpt-oss-20b"), c);
  REQUIRE(r.ok);
  const auto& config = std::get<SglangConfig>(r.config);
  CHECK(config.attention_backend == SglangAttentionBackend::fa3);
  const auto& f = std::get<SglangFigures>(r.figures);
  // cell_size over all 24 layers: 8 KV heads × (64 + 64) × 24 × 2 bytes.
  CHECK(f.cell_size == 49152);
  const auto profiled = static_cast<std::int64_t>(f.rest_memory / 49152.0);
  const SglangSwaTokens split = sglang_hybrid_swa_tokens(profiled, 12, 12, 0.8, 1);
  // 1,152,613 profiled tokens (the pool --disable-hybrid-swa-memory gets; 683 fewer than before the
  // float32 rotary cos_sin_cache [131072, 64], 32 MiB, was allocated among the weights, §10):
  // int(1,152,613 × 24 / 21.6) = 1,280,681 full, int(× 0.8) = 1,024,544 SWA.
  CHECK(profiled == 1152613);
  CHECK(split == SglangSwaTokens{1280681, 1024544});
  CHECK(r.kv_tokens == split.full);
  CHECK(f.swa_tokens == split.swa);
  // --max-total-tokens caps the tokens before the split: the setting that gives this pool.
  CHECK_THAT(engine_traits(model::Engine::sglang).capacity_setting(r),
             Catch::StartsWith("--max-total-tokens 1152613 (") && Catch::Contains("1280681 full and 1024544 SWA"));
  CHECK(f.sliding_window == 127);  // gpt_oss.py get_attention_sliding_window_size: sliding_window - 1
  CHECK(f.full_layers == 12);
  CHECK(f.swa_layers == 12);
  // The request pool is sized before the split, from the profiled tokens (§2.3).
  CHECK(f.max_num_reqs == sglang_max_num_reqs(profiled, 131072));
  // 24 full-layer tensors [full + 1, 8, 64], 24 SWA-layer tensors [swa + 1, 8, 64], the int64 map.
  REQUIRE(r.memory.kv_cache.size() == 49);
  CHECK(r.memory.kv_cache[0]->requested_size == static_cast<Bytes>(split.full + 1) * 8 * 64 * 2);
  CHECK(r.memory.kv_cache[24]->requested_size == static_cast<Bytes>(split.swa + 1) * 8 * 64 * 2);
  CHECK(r.memory.kv_cache[48]->requested_size == static_cast<Bytes>(split.full + 2) * 8);
  // The pools' bytes stay within the profiled budget: the split moves tokens, not memory.
  CHECK(static_cast<double>(split.full + split.swa) * 12 * 2048 <= f.rest_memory);
  CHECK(r.forward.attention == model::AttentionBackend::flash_attn);
  CHECK(r.forward.attention_workspace == 0);
  // FA3's graph metadata for 256 graphs (the §2.1 table's cuda_graph_max_bs on 80 GB): 257 MiB of
  // workspaces, 2 × 128 MiB page tables among them.
  CHECK(r.graph_batch_sizes.back() == 256);
  CHECK(r.bytes.workspaces >= 2 * 134217728 + 1048576);
}

TEST_CASE("SGLang gpt-oss: the default flags run SWARadixCache, version 0.4 with it, non-Hopper GPUs and flashinfer are errors") {
  SglangConfig radix;  // the default flags: the SWA pool with SWARadixCache, as with --disable-radix-cache
  StartupResult r = sglang_startup(on("h100-sxm-80gb", "gpt-oss-20b"), radix);
  REQUIRE(r.ok);
  CHECK(r.kv_tokens == 1280681);
  CHECK(std::get<SglangFigures>(r.figures).swa_tokens == 1024544);
  SglangConfig old;
  old.version = SglangVersion::v0_4;
  CHECK_THROWS_WITH(resolve(old, on("h100-sxm-80gb", "gpt-oss-20b")),
                    Catch::Contains("'gpt-oss-20b' (gpt_oss) on SGLang 0.4 (v0.4.6) is not modelled"));
  old.disable_hybrid_swa_memory = true;
  CHECK_THROWS_WITH(resolve(old, on("h100-sxm-80gb", "gpt-oss-20b")), Catch::Contains("use version current"));
  SglangConfig a100 = chunk_cache();
  CHECK_THROWS_WITH(resolve(a100, on("a100-80gb", "gpt-oss-20b")),
                    Catch::Contains("runs on triton here, which is not modelled"));
  SglangConfig b200 = chunk_cache();
  CHECK_THROWS_WITH(resolve(b200, on("b200", "gpt-oss-20b")), Catch::Contains("runs on trtllm_mha here"));
  SglangConfig flashinfer = chunk_cache();
  flashinfer.attention_backend = SglangAttentionBackend::flashinfer;
  CHECK_THROWS_WITH(resolve(flashinfer, on("h100-sxm-80gb", "gpt-oss-20b")), Catch::Contains("runs on flashinfer here"));
  SglangConfig ratio = chunk_cache();
  ratio.swa_full_tokens_ratio = 0;
  CHECK_THROWS_WITH(resolve(ratio, on("h100-sxm-80gb", "gpt-oss-20b")),
                    Catch::Contains("swa_full_tokens_ratio: expected a value above 0, got 0"));
}

TEST_CASE("SGLang gpt-oss with --disable-hybrid-swa-memory: one MHA pool over all 24 layers, radix cache kept") {
  SglangConfig c;
  c.disable_hybrid_swa_memory = true;
  c.disable_cuda_graph = true;
  StartupResult r = sglang_startup(on("h100-sxm-80gb", "gpt-oss-20b"), c);
  REQUIRE(r.ok);
  const auto& f = std::get<SglangFigures>(r.figures);
  CHECK(f.swa_tokens == 0);
  CHECK(r.kv_tokens == static_cast<std::int64_t>(f.rest_memory / 49152.0));
  CHECK(r.kv_tokens == 1152613);  // 683 fewer with the 32 MiB rotary cache (§10)
  REQUIRE(r.memory.kv_cache.size() == 48);
}

TEST_CASE("SGLang SWA scheduler: decode frees the SWA slots that left the window every window steps") {
  SwaHarness h(swa_limits(10000, 1000, 8));
  const auto id = h.add(30, 40);
  h.step();  // prefill: 30 slots in each pool
  CHECK(h.sched.swa_slots_of(id) == 30);
  h.step();  // decode 1 (decode_batch_idx 0): no eviction, one more slot
  CHECK(h.sched.swa_slots_of(id) == 31);
  // decode 2 (decode_batch_idx 1): tokens before 31 - 8 = 23 give their SWA slots back.
  h.step();
  CHECK(h.sched.swa_slots_of(id) == 31 - 23 + 1);
  CHECK(h.sched.swa_cache().request_full_tokens() == 32);  // the full pool keeps every token
  for (int k = 0; k < 7; ++k) h.step();                    // decode_batch_idx 2..8: no eviction
  CHECK(h.sched.swa_slots_of(id) == 16);
  h.step();  // decode_batch_idx 9: before 39 - 8 = 31
  CHECK(h.sched.swa_slots_of(id) == 39 - 31 + 1);
  while (h.sched.has_work()) h.step();
  CHECK(h.sched.swa_used() == 0);  // ChunkCache: a finished request frees both pools
  CHECK(h.sched.swa_cache().request_full_tokens() == 0);
  CHECK(h.sched.swa_cache().tree_full_tokens() == 0);
}

TEST_CASE("SGLang SWA scheduler: admission counts the smaller pool's free and evictable slots") {
  // rem_total_tokens = min(full free + evictable, SWA free + evictable) less the batch's
  // reservations: SWA pool 300, each request 100 + 10; the third sees 300 - 220 = 80 <= 110 and
  // waits although the full pool has room.
  SwaHarness h(swa_limits(100000, 300, 64));
  for (int i = 0; i < 3; ++i) h.add(100, 10);
  h.step();
  CHECK(h.plan.scheduled.size() == 2);
  CHECK(h.sched.waiting() == 1);
  CHECK(h.sched.batch_is_full());
  // The window reserves nothing: 10 + 5 each, the third sees 40 - 30 = 10 <= 15.
  SwaHarness small(swa_limits(100000, 40, 64));
  for (int i = 0; i < 4; ++i) small.add(10, 5);
  small.step();
  CHECK(small.plan.scheduled.size() == 2);
}

TEST_CASE("SGLang SWA scheduler: a long chunked prompt holds only about a window of SWA slots between chunks") {
  // The SWA pool must hold the whole request (2,000 + 4 < 2,100): admission counts its prompt
  // against the smaller pool although the window frees most of it between chunks.
  SwaHarness h(swa_limits(100000, 2100, 128, 512));
  const auto id = h.add(2000, 4);
  h.step();  // chunk 1: 512 tokens
  CHECK(h.sched.swa_slots_of(id) == 512);
  h.step();  // chunk 2: tokens before 512 - 128 = 384 freed, 512 more
  CHECK(h.sched.swa_slots_of(id) == 512 - 384 + 512);
  while (h.sched.has_work()) h.step();
  CHECK(h.sched.swa_used() == 0);
}

TEST_CASE("SGLang SWA scheduler: seeded mixed load keeps both pools' invariants, retraction frees SWA slots") {
  // Every request fits the SWA pool whole (prompt + max_new < 1,200): admission counts both.
  SwaHarness h(swa_limits(3000, 1200, 32, 256));
  std::uint64_t seed = 12345;
  auto next = [&seed](std::uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  for (int i = 0; i < 60; ++i) {
    h.add(static_cast<Tokens>(20 + next(700)), static_cast<Tokens>(1 + next(400)));
    for (int k = 0; k < 3; ++k) h.step();  // invariants after every call (harness)
  }
  for (int k = 0; k < 100000 && h.sched.has_work(); ++k) h.step();
  CHECK_FALSE(h.sched.has_work());
  CHECK(h.sched.swa_used() == 0);
  CHECK(h.sched.counters().preemptions > 0);
}

namespace {

// Eight requests decoding with a window of 16: after a warm-up, 500 steps allocate nothing.
void check_warm_swa_decode_loop(const SglangSchedulerLimits& limits) {
  SwaHarness h(limits);
  for (int i = 0; i < 8; ++i) h.add(40 + i, 5000);
  for (int k = 0; k < 200; ++k) h.step();  // warm: every request decoding, evictions seen
  StepPlan plan;
  std::vector<std::uint64_t> finished;
  finished.reserve(16);
  h.sched.schedule(0, plan);  // the plan's vectors reach their size
  h.sched.complete_step(plan, 0, finished);
  const std::size_t before = headroom::test::heap_allocations();
  for (int k = 0; k < 500; ++k) {
    plan.clear();
    h.sched.schedule(0, plan);
    h.sched.complete_step(plan, 0, finished);
  }
  CHECK(headroom::test::heap_allocations() == before);
  h.sched.check_invariants();
  CHECK(h.sched.swa_used() <= 8 * (2 * 16 + 1));  // at most two windows and a token each
}

}  // namespace

TEST_CASE("SGLang SWA scheduler: a warm decode loop with SWA evictions allocates nothing") {
  check_warm_swa_decode_loop(swa_limits(100000, 20000, 16));
}

TEST_CASE("SGLang SWA radix: SWA pressure tombstones a cached prefix, and a match needs the window after a tombstone") {
  // Window 64, 512-token hash blocks. A (blocks 1 2 3, 1,100 tokens) finishes: the tree holds its
  // 1,101 tokens in both pools, unlocked; in the LRU lists block 1 is least recent, then block 2.
  SwaHarness h(swa_limits(10000, 1500, 64, 8192, true));
  h.add(1100, 2, {1, 2, 3});
  while (h.sched.has_work()) h.step();
  const SwaRadixKvCache& c = h.sched.swa_cache();
  CHECK(c.tree_full_tokens() == 1101);
  CHECK(c.tree_swa_tokens() == 1101);
  // C (1,000 unique tokens) is admitted against min(full, SWA free + evictable) = 1,500; its
  // allocation evicts the SWA shortfall (1,000 - 399) from the SWA list's least recent end:
  // blocks 1 and 2 are inner nodes, so they are tombstoned (1,024 SWA tokens), their full KV kept.
  h.add(1000, 2);
  h.step();
  CHECK(c.counters().tombstoned_nodes == 2);
  CHECK(c.counters().evicted_swa_tokens == 1024);
  CHECK(c.tree_full_tokens() == 1101 + 1000);
  CHECK(c.tree_swa_tokens() == 77 + 1000);
  // D repeats A: blocks 1 and 2 are tombstones, but 75 tokens of block 3 after them cover the
  // window: 1,099 tokens match. E shares only blocks 1 and 2: nothing after the tombstones matches.
  const auto d = h.add(1100, 2, {1, 2, 3});
  const auto e = h.add(1030, 2, {1, 2});
  while (h.sched.has_work()) h.step();
  CHECK(h.r(d).cached_tokens == 1099);
  CHECK(h.r(e).cached_tokens == 0);
}

TEST_CASE("SGLang SWA radix: a decoding request frees its SWA slots past the window, its tail joins as a tombstone") {
  SwaHarness h(swa_limits(10000, 1000, 8, 8192, true));
  const auto id = h.add(30, 20);
  h.step();  // prefill: the 30 prompt tokens join the tree, locked (SWA too: 30 >= 8)
  const SwaRadixKvCache& c = h.sched.swa_cache();
  CHECK(c.tree_full_tokens() == 30);
  CHECK(c.swa_protected_size() == 30);
  CHECK(h.sched.swa_slots_of(id) == 0);
  // _evict_swa from the locked prefix on, every 8 decode steps (decode_batch_idx 1, 9, 17):
  // before max(30, 31 - 8), before 39 - 8 = 31, before 47 - 8 = 39.
  for (int k = 0; k < 17; ++k) h.step();  // decode_batch_idx 0..16
  CHECK(h.sched.swa_slots_of(id) == 47 - 31);
  h.step();  // decode_batch_idx 17
  CHECK(h.sched.swa_slots_of(id) == 48 - 39);
  while (h.sched.has_work()) h.step();
  // 49 tokens with KV: [30, 39) lost their SWA slots and join as a tombstone, [39, 49) with them.
  CHECK(c.snapshot() == std::vector<SwaRadixKvCache::NodeInfo>{{1, 0, 30, 0, 0, false},
                                                               {2, 1, 9, 0, 0, true},
                                                               {3, 2, 10, 0, 0, false}});
  CHECK(c.tree_swa_tokens() == 40);
  CHECK(c.swa_available() == 1000 - 40);
  CHECK(c.full_available() == 10000 - 49);
}

TEST_CASE("SGLang SWA radix: seeded mixed load with shared prefixes keeps both pools' invariants") {
  SwaHarness h(swa_limits(2500, 1500, 32, 256, true));  // prompt + max_new < 1,500 for every request
  std::uint64_t seed = 777;
  auto next = [&seed](std::uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  for (int i = 0; i < 60; ++i) {
    const std::uint64_t doc = next(4);
    std::vector<std::uint64_t> hashes;
    for (std::uint64_t k = 0; k < 1 + next(2); ++k) hashes.push_back(doc * 10 + k);
    h.add(static_cast<Tokens>(400 + next(500)), static_cast<Tokens>(1 + next(500)), hashes);
    for (int k = 0; k < 3; ++k) h.step();  // invariants after every call (harness)
  }
  for (int k = 0; k < 100000 && h.sched.has_work(); ++k) h.step();
  CHECK_FALSE(h.sched.has_work());
  CHECK(h.sched.swa_used() == 0);
  CHECK(h.sched.counters().preemptions > 0);
  CHECK(h.sched.counters().prefix_hit_tokens > 0);
  CHECK(h.sched.swa_cache().counters().tombstoned_nodes > 0);
}

TEST_CASE("SGLang SWA radix: a warm decode loop with SWA evictions allocates nothing") {
  check_warm_swa_decode_loop(swa_limits(100000, 20000, 16, 8192, true));
}

TEST_CASE("SGLang --disable-radix-cache (ChunkCache): no prefix reuse, every slot freed when a request ends") {
  SglangSchedulerLimits l = swa_limits(100000, 0, 0);
  REQUIRE(l.disable_radix_cache);
  SwaHarness h(l);
  const auto a = h.add(1200, 3, {7, 8});
  h.step();
  const auto b = h.add(1200, 3, {7, 8});  // the same two 512-token blocks: a radix cache would hit 1024
  while (h.sched.has_work()) h.step();
  CHECK(h.r(a).cached_tokens == 0);
  CHECK(h.r(b).cached_tokens == 0);
  CHECK(h.sched.counters().prefix_hit_tokens == 0);
  CHECK(h.sched.cache().cached_tokens() == 0);
  CHECK(h.sched.cache().available_size() == 100000);
}
