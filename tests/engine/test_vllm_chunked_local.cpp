// Chunked local attention (Llama 4) in vLLM's hybrid KV-cache manager: its layers as a third kind
// of KV cache group (vllm/v1/kv_cache_interface.py ChunkedLocalAttentionSpec.max_memory_usage_bytes,
// vllm/v1/core/single_type_kv_cache_manager.py ChunkedLocalAttentionManager, vLLM main 2026), the
// start-up figures for Llama-4-Scout at tensor parallel 4, and the blocks before the current chunk
// freed while serving; LightLLM refuses the model (SGLang's SWA pool: test_sglang_swa_pool.cpp).
#include <catch2/catch.hpp>

#include "sim/core/error.hpp"
#include "sim/engine/paged_kv_cache.hpp"
#include "sim/engine/startup.hpp"
#include "sim/engine/vllm_kv_cache_groups.hpp"
#include "sim/engine/vllm_scheduler.hpp"
#include "tests/engine/deployment_on.hpp"
#include "tests/engine/vllm_serve_uniform.hpp"

using namespace headroom;
using namespace headroom::engine;

using headroom::engine::test::on;

namespace {

constexpr const char* kScout = "Llama-4-Scout-17B-16E-Instruct";

// `hashes` (Mooncake blocks of 8 tokens) must outlive the request, which views them.
KvRequest chunked_prompt(RequestId id, Tokens tokens, const std::vector<std::uint64_t>& hashes = {}) {
  KvRequest k;
  k.id = id;
  k.prompt_tokens = tokens;
  k.num_tokens = tokens;
  k.prefix_hashes = hashes;
  k.prefix_block_tokens = hashes.empty() ? 0 : 8;
  return k;
}

std::size_t null_blocks(std::span<const PagedKvCache::BlockId> table) {
  std::size_t n = 0;
  for (auto b : table) n += b == PagedKvCache::kNullBlock;
  return n;
}

}  // namespace

TEST_CASE("vLLM KV cache groups for Llama 4: 36 chunked layers in three groups of 12, the 12 NoPE layers full") {
  using model::AttentionKind;
  const VllmKvCacheGroups g = vllm_kv_cache_groups(model::catalogue_model(kScout), true);
  // Layer 0 is chunked, layer 3 the first NoPE one: chunked groups first; 36 vs 12 layers, 36 is
  // not under 1.5 × 12, so group_size is the fewest, 12.
  CHECK(g.group_size == 12);
  CHECK(g.groups == std::vector<VllmKvCacheGroup>{{AttentionKind::chunked_local, 8192, 12},
                                                  {AttentionKind::chunked_local, 8192, 12},
                                                  {AttentionKind::chunked_local, 8192, 12},
                                                  {AttentionKind::full, 0, 12}});
  CHECK(vllm_groups_chunked(g));
  CHECK(vllm_group_windows(g) == std::vector<Tokens>{8192, 8192, 8192, 0});
  // One request of 32,768 tokens at T 8,192: full cdiv(32768, 16) = 2,048; each chunked group
  // cdiv(min(8192 + 8192, 32768), 16) = 1,024.
  CHECK(vllm_request_blocks(g, 32768, 8192, 16) == 2048 + 3 * 1024);
  // A max_model_len under chunk + T caps the chunked groups too: cdiv(4000, 16) = 250 each.
  CHECK(vllm_request_blocks(g, 4000, 8192, 16) == 4 * 250);
  // --disable-hybrid-kv-cache-manager (unify_hybrid_kv_cache_specs): one full group of 48.
  const VllmKvCacheGroups unified = vllm_kv_cache_groups(model::catalogue_model(kScout), false);
  CHECK(unified.groups == std::vector<VllmKvCacheGroup>{{AttentionKind::full, 0, 48}});
  CHECK_FALSE(vllm_groups_chunked(unified));
}

TEST_CASE("vLLM starts Llama-4-Scout at TP 4: 20 GiB is 109,226 blocks, 436,896 tokens, 21.33x at 32,768") {
  VllmConfig c;
  c.kv_cache_memory_bytes = 20 * GiB;
  c.max_model_len = 32768;
  c.cudagraph_mode = CudaGraphMode::none;  // the pool is what is checked here
  // On H200s: since the bf16 rotary cos_sin_cache [10485760, 128] (2.5 GiB, serving-memory-model.md
  // §10) is allocated, an H100's 80 GB no longer holds a rank's weights, 20 GiB of KV and the
  // 1,024-row sampler warm-up; the pool's figures below do not depend on the GPU.
  StartupResult r = vllm_startup(on("h200-141gb", kScout, 4), c);
  INFO(r.failure);
  REQUIRE(r.ok);
  // page = 2 × 16 × (8 / 4) × 128 × 2 B = 16 KiB; num_blocks = 20 GiB // 16 KiB // 12 = 109,226;
  // GPU KV cache size = 109,226 // 4 groups × 16 = 436,896 tokens; concurrency 109,226 / 5,120.
  CHECK(std::get<VllmFigures>(r.figures).page_size == 16384);
  CHECK(r.kv_blocks == 109226);
  CHECK(r.kv_tokens == 436896);
  CHECK(r.kv_groups_chunked);
  CHECK(r.kv_group_windows == std::vector<std::int64_t>{8192, 8192, 8192, 0});
  CHECK(r.memory.kv_cache.size() == 12);
  CHECK(std::get<VllmFigures>(r.figures).max_concurrency == Approx(109226.0 / 5120.0));
  // Hybrid manager off: 48 tensors, 20 GiB // 16 KiB // 48 = 27,306 blocks, 436,896 tokens, 27,306 / 2,048.
  c.disable_hybrid_kv_cache_manager = true;
  StartupResult unified = vllm_startup(on("h200-141gb", kScout, 4), c);
  REQUIRE(unified.ok);
  CHECK(unified.kv_blocks == 27306);
  CHECK(unified.kv_tokens == 436896);
  CHECK_FALSE(unified.kv_groups_chunked);
  CHECK(std::get<VllmFigures>(unified.figures).max_concurrency == Approx(27306.0 / 2048.0));
}

TEST_CASE("hybrid paged KV cache, chunked local attention: blocks before the current chunk are freed") {
  // Chunk 8, block 4 (the examples of ChunkedLocalAttentionManager.get_num_skipped_tokens); groups
  // chunked then full, one pool of 63 usable blocks.
  PagedKvCache cache(64, 4, true, {8, 0}, true);
  KvRequest a = chunked_prompt(1, 13);
  REQUIRE(cache.allocate_slots(a, 13));  // 4 blocks a group, nothing skipped before computing
  CHECK(null_blocks(cache.block_table(1, 0)) == 0);
  // Computed 13: tokens [0, 8) are before the current chunk, blocks 0 and 1 go.
  a.num_tokens = 14;
  a.num_computed_tokens = 13;
  REQUIRE(cache.allocate_slots(a, 1));
  CHECK(null_blocks(cache.block_table(1, 0)) == 2);
  CHECK(null_blocks(cache.block_table(1, 1)) == 0);
  CHECK(cache.blocks_held(1) == 6);
  // Computed 15: still in the chunk [8, 16); computed 16: the chunk [16, 24) starts, blocks 2, 3 go.
  a.num_tokens = 16;
  a.num_computed_tokens = 15;
  REQUIRE(cache.allocate_slots(a, 1));
  CHECK(null_blocks(cache.block_table(1, 0)) == 2);
  a.num_tokens = 17;
  a.num_computed_tokens = 16;
  REQUIRE(cache.allocate_slots(a, 1));
  CHECK(cache.block_table(1, 0).size() == 5);
  CHECK(null_blocks(cache.block_table(1, 0)) == 4);
  CHECK(cache.blocks_held(1) == 6);
  cache.check_invariants();
  CHECK(cache.free(1));
  CHECK(cache.num_free_blocks() == 63);
  cache.check_invariants();
}

TEST_CASE("hybrid paged KV cache, chunked local attention: blocks before the hit's chunk hit without a lookup") {
  PagedKvCache cache(64, 4, true, {8, 0}, true);
  const std::vector<std::uint64_t> hashes{5, 6, 7};  // 24 shared tokens, Mooncake blocks of 8
  KvRequest a = chunked_prompt(1, 24, hashes);
  REQUIRE(cache.allocate_slots(a, 24));
  CHECK(cache.free(1));  // six blocks a group, all cached
  // 17 tokens: at most 16 cached (the last one is recomputed), four blocks. The full hit is four
  // blocks; max_length 16 starts the chunk at 16, so the chunked group's four are nulls, hit anyway
  // (ChunkedLocalAttentionManager.find_longest_cache_hit, example 2).
  KvRequest b = chunked_prompt(2, 17, hashes);
  CHECK(cache.find_cached_prefix(b) == 16);
  REQUIRE(cache.allocate_slots(b, 1));
  CHECK(null_blocks(cache.block_table(2, 0)) == 4);
  CHECK(null_blocks(cache.block_table(2, 1)) == 0);
  CHECK(cache.free(2));
  // 13 tokens: three blocks of full hit, max_length 12: the chunk starts at 8 (block 2), which is
  // cached: blocks [null, null, hit].
  KvRequest c = chunked_prompt(3, 13, hashes);
  CHECK(cache.find_cached_prefix(c) == 12);
  REQUIRE(cache.allocate_slots(c, 1));
  CHECK(null_blocks(cache.block_table(3, 0)) == 2);
  CHECK(cache.block_table(3, 0).size() == 4);
  cache.check_invariants();
  CHECK(cache.free(3));
  cache.check_invariants();
}

TEST_CASE("Llama 4 on LightLLM and vLLM before current is an error naming what serves it") {
  const Deployment d = on("h100-sxm-80gb", kScout, 8);
  LightllmConfig l;
  CHECK_THROWS_WITH(resolve(l, d), Catch::Contains("LightLLM serves no Llama 4 model"));
  VllmConfig v;
  v.version = VllmVersion::v0_10;
  CHECK_THROWS_WITH(resolve(v, d), Catch::Contains("has chunked local attention layers"));
  VllmConfig current;
  CHECK_NOTHROW(resolve(current, d));
}

TEST_CASE("vLLM scheduler on a chunked-local pool: invariants hold each step and fewer preemptions than full") {
  auto serve = [](bool chunked) {
    VllmSchedulerLimits l;
    l.max_num_batched_tokens = 256;
    l.max_num_seqs = 32;
    l.block_size = 16;
    l.num_blocks = 161;
    l.enable_prefix_caching = true;
    l.max_model_len = 2048;
    l.group_windows = {chunked ? 128 : 0, 0};
    l.chunked_local = chunked;  // blocks before each request's current chunk are freed
    return headroom::engine::test::serve_uniform(l, 8, 600, 100, 20000);
  };
  // 160 blocks: two full groups hold two requests of 700 tokens (44 blocks each, twice); with the
  // first group chunked (128 tokens) a decoding request holds 44 + at most 9 blocks.
  const std::int64_t full = serve(false);
  const std::int64_t chunked = serve(true);
  INFO("preemptions: full " << full << ", chunked " << chunked);
  CHECK(full > 0);
  CHECK(chunked < full);
}
