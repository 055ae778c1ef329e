// vLLM's hybrid KV-cache manager (sim/engine/vllm_kv_cache_groups.hpp, paged_kv_cache.hpp groups;
// docs/serving-memory-model.md §1.2b): the layer groups of vllm/v1/core/kv_cache_utils.py at commit
// 001cabc1b, the pool's size and one-request check at start-up with worked numbers for gpt-oss-20b,
// and sliding-window blocks freed as they leave the window while serving.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "sim/engine/paged_kv_cache.hpp"
#include "sim/engine/startup.hpp"
#include "sim/engine/vllm_kv_cache_groups.hpp"
#include "sim/engine/vllm_scheduler.hpp"
#include "tests/engine/deployment_on.hpp"
#include "tests/engine/vllm_serve_uniform.hpp"
#include "tests/support/allocation_counter.hpp"

using namespace headroom;
using namespace headroom::engine;

using headroom::engine::test::on;

namespace {

using model::AttentionKind;

// A model of `layers` layers whose listed layers attend to a window of `window` tokens.
model::ModelConfig windowed(int layers, std::vector<int> sliding, int window = 512) {
  model::ModelConfig c = model::catalogue_model("gpt-oss-20b");
  c.layers = layers;
  c.sliding_layers = std::move(sliding);
  c.sliding_window = window;
  return c;
}

KvRequest prompt_of(RequestId id, Tokens tokens) {
  KvRequest k;
  k.id = id;
  k.prompt_tokens = tokens;
  k.num_tokens = tokens;
  return k;
}

std::size_t nulls(std::span<const PagedKvCache::BlockId> table) {
  std::size_t n = 0;
  for (auto b : table) n += b == PagedKvCache::kNullBlock;
  return n;
}

}  // namespace

TEST_CASE("vLLM KV cache groups: by kind in layer order, group_size from the fewest layers or the most") {
  // gpt-oss-20b: layer_types alternate sliding/full from layer 0, 12 + 12: two groups of 12.
  const VllmKvCacheGroups oss = vllm_kv_cache_groups(model::catalogue_model("gpt-oss-20b"), true);
  CHECK(oss.group_size == 12);
  REQUIRE(oss.groups.size() == 2);
  CHECK(oss.groups[0] == VllmKvCacheGroup{AttentionKind::sliding_window, 128, 12});
  CHECK(oss.groups[1] == VllmKvCacheGroup{AttentionKind::full, 0, 12});
  CHECK(vllm_group_windows(oss) == std::vector<Tokens>{128, 0});
  // A pipeline stage groups its own layers: gpt-oss-20b's first 12 layers (pp 2) are 6 sliding + 6
  // full, two groups of 6; a stage of sliding layers only is one group.
  const VllmKvCacheGroups stage = vllm_kv_cache_groups(model::catalogue_model("gpt-oss-20b"), true, 0, 12);
  CHECK(stage.group_size == 6);
  REQUIRE(stage.groups.size() == 2);
  CHECK(stage.groups[0] == VllmKvCacheGroup{AttentionKind::sliding_window, 128, 6});
  CHECK(stage.groups[1] == VllmKvCacheGroup{AttentionKind::full, 0, 6});
  const VllmKvCacheGroups one_layer = vllm_kv_cache_groups(model::catalogue_model("gpt-oss-20b"), true, 0, 1);
  CHECK(one_layer.group_size == 1);
  CHECK(one_layer.groups == std::vector<VllmKvCacheGroup>{{AttentionKind::sliding_window, 128, 1}});
  // Disabled (unify_hybrid_kv_cache_specs): every layer full attention, one group of 24.
  const VllmKvCacheGroups unified = vllm_kv_cache_groups(model::catalogue_model("gpt-oss-20b"), false);
  CHECK(unified.group_size == 24);
  CHECK(unified.groups == std::vector<VllmKvCacheGroup>{{AttentionKind::full, 0, 24}});
  // A 5:1 pattern (Gemma 3's 26 layers, full at 5, 11, 17, 23): 4 full, 22 sliding: group_size 4,
  // 6 sliding groups (layers[i::6]: 4, 4, 4, 4, 3, 3 real layers) and 1 full one.
  const VllmKvCacheGroups five = vllm_kv_cache_groups(
      windowed(26, {0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 24, 25}), true);
  CHECK(five.group_size == 4);
  REQUIRE(five.groups.size() == 7);
  for (int i = 0; i < 6; ++i) CHECK(five.groups[static_cast<std::size_t>(i)].layers == (i < 4 ? 4 : 3));
  CHECK(five.groups[6] == VllmKvCacheGroup{AttentionKind::full, 0, 4});
  // 12 sliding + 13 full: 13 < 1.5 × 12, so group_size is 13 and the sliding group is padded.
  std::vector<int> sliding;
  for (int l = 1; l < 25; l += 2) sliding.push_back(l);
  const VllmKvCacheGroups padded = vllm_kv_cache_groups(windowed(25, sliding), true);
  CHECK(padded.group_size == 13);
  CHECK(padded.groups == std::vector<VllmKvCacheGroup>{{AttentionKind::full, 0, 13}, {AttentionKind::sliding_window, 512, 12}});
  // A model without windows: one full group of every layer.
  CHECK(vllm_kv_cache_groups(model::catalogue_model("Llama-3.1-8B"), true).groups ==
        std::vector<VllmKvCacheGroup>{{AttentionKind::full, 0, 32}});
}

TEST_CASE("vLLM KV cache groups: one request's blocks, full cdiv(len, 16), sliding cdiv(min(W-1+T, len), 16)+1") {
  const VllmKvCacheGroups oss = vllm_kv_cache_groups(model::catalogue_model("gpt-oss-20b"), true);
  // 131,072 tokens, T 8,192: full 8,192 blocks; sliding min(127 + 8192, 131072) = 8,319 tokens, 520 + 1.
  CHECK(vllm_request_blocks(oss, 131072, 8192, 16) == 8192 + 521);
  // A short max_model_len caps the sliding group too: min(8319, 100) = 100 tokens, 7 + 1 blocks.
  CHECK(vllm_request_blocks(oss, 100, 8192, 16) == 7 + 8);
}

TEST_CASE("vLLM starts gpt-oss-20b with a hybrid pool: 40 GiB is 109,226 blocks, 873,808 tokens, 12.54x") {
  VllmConfig c;
  c.kv_cache_memory_bytes = 40 * GiB;
  StartupResult r = vllm_startup(on("h100-sxm-80gb", "gpt-oss-20b"), c);
  INFO(r.failure);
  REQUIRE(r.ok);
  // page = 2 × 16 × 8 × 64 × 2 B = 32 KiB; num_blocks = 40 GiB // 32 KiB // 12 = 109,226;
  // GPU KV cache size = 109,226 // 2 groups × 16 = 873,808 tokens; concurrency 109,226 / 8,713.
  CHECK(r.kv_blocks == 109226);
  CHECK(r.kv_tokens == 873808);
  CHECK(r.kv_group_windows == std::vector<std::int64_t>{128, 0});
  CHECK(r.memory.kv_cache.size() == 12);
  // 12 tensors of 32,768 × 109,226 = 3,579,117,568 B, each reserved in whole 2 MiB (1,707 × 2 MiB).
  CHECK(r.bytes.kv_cache == 12 * Bytes{1707} * 2 * MiB);
  CHECK(std::get<VllmFigures>(r.figures).max_concurrency == Approx(109226.0 / 8713.0));
  CHECK(std::find(r.log.begin(), r.log.end(), "Maximum concurrency for 131072 tokens per request: 12.54x") != r.log.end());

  // --disable-hybrid-kv-cache-manager: 24 full layers, 54,613 blocks, the same 873,808 tokens, half the concurrency.
  c.disable_hybrid_kv_cache_manager = true;
  StartupResult unified = vllm_startup(on("h100-sxm-80gb", "gpt-oss-20b"), c);
  REQUIRE(unified.ok);
  CHECK(unified.kv_blocks == 54613);
  CHECK(unified.kv_tokens == 873808);
  CHECK(unified.memory.kv_cache.size() == 24);
  CHECK(std::get<VllmFigures>(unified.figures).max_concurrency == Approx(54613.0 / 8192.0));
}

TEST_CASE("vLLM gpt-oss-20b on an H100 at 0.9: blocks = available // 32 KiB // 12, tokens = blocks // 2 x 16") {
  StartupResult r = vllm_startup(on("h100-sxm-80gb", "gpt-oss-20b"), VllmConfig{});
  INFO(r.failure);
  REQUIRE(r.ok);
  const auto& f = std::get<VllmFigures>(r.figures);
  CHECK(f.page_size == 32768);
  CHECK(r.kv_blocks == f.available_kv / 32768 / 12);
  CHECK(r.kv_tokens == r.kv_blocks / 2 * 16);
  CHECK(std::find(r.log.begin(), r.log.end(), fmt::format("GPU KV cache size: {} tokens", r.kv_tokens)) != r.log.end());
}

TEST_CASE("vLLM gpt-oss-20b: one request needs 12 x 32 KiB x 8,713 blocks, 3 GiB fits 122,736 tokens") {
  VllmConfig c;
  c.kv_cache_memory_bytes = 3 * GiB;
  StartupResult r = vllm_startup(on("h100-sxm-80gb", "gpt-oss-20b"), c);
  REQUIRE_FALSE(r.ok);
  CHECK(r.stage == StartupStage::kv_cache_sizing);
  // 12 × 32,768 × 8,713 B = 3.19 GiB; 3 GiB holds 8,192 blocks of both groups: full cdiv(L, 16) ≤
  // 8,192 − 521, so L = 7,671 × 16.
  CHECK(r.failure ==
        "To serve at least one request with the model's max seq len (131072), 3.19 GiB KV cache is needed, which is "
        "larger than the available KV cache memory (3.00 GiB). Based on the available memory, the estimated maximum "
        "model length is 122736. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine.");
}

TEST_CASE("hybrid paged KV cache: sliding-window blocks leave as the window passes, full ones stay") {
  // gpt-oss's groups: sliding (128 tokens) then full, one pool of 199 usable blocks.
  PagedKvCache cache(200, 16, true, {128, 0});
  const KvRequest a = prompt_of(1, 300);
  REQUIRE(cache.allocate_slots(a, 300));  // the whole prompt in one chunk: 19 blocks in each group
  CHECK(cache.block_table(1, 0).size() == 19);
  CHECK(cache.block_table(1, 1).size() == 19);
  CHECK(cache.num_free_blocks() == 199 - 38);
  // The first decode: computed 300, so tokens [0, 173) are behind the window: 10 whole blocks go.
  KvRequest decode = a;
  decode.num_tokens = 301;
  decode.num_computed_tokens = 300;
  REQUIRE(cache.allocate_slots(decode, 1));
  CHECK(nulls(cache.block_table(1, 0)) == 10);
  CHECK(nulls(cache.block_table(1, 1)) == 0);
  CHECK(cache.blocks_held(1) == 28);
  CHECK(cache.num_free_blocks() == 199 - 28);
  cache.check_invariants();
  // Four decodes later (computed 304) block 19 starts in both groups and block 10 leaves the window.
  decode.num_tokens = 305;
  decode.num_computed_tokens = 304;
  REQUIRE(cache.allocate_slots(decode, 1));
  CHECK(cache.block_table(1, 0).size() == 20);
  CHECK(nulls(cache.block_table(1, 0)) == 11);
  CHECK(cache.blocks_held(1) == 29);
  cache.check_invariants();
  // Free: every held block returns, none is the null block.
  CHECK(cache.free(1));
  CHECK(cache.num_free_blocks() == 199);
  cache.check_invariants();
}

TEST_CASE("hybrid paged KV cache: a prefix hit needs the window's blocks cached, the full hit is cut to it") {
  PagedKvCache cache(400, 16, true, {128, 0});
  // Two requests sharing a 1,024-token prefix (two Mooncake hash ids of 512 tokens).
  std::vector<std::uint64_t> hashes{11, 22};
  KvRequest a = prompt_of(1, 1100);
  a.prefix_hashes = hashes;
  a.prefix_block_tokens = 512;
  REQUIRE(cache.allocate_slots(a, 1100));  // 69 blocks per group, 64 of them the shared prefix
  KvRequest a_decode = a;
  a_decode.num_tokens = 1101;
  a_decode.num_computed_tokens = 1100;
  REQUIRE(cache.allocate_slots(a_decode, 1));  // (1100 − 127) // 16: frees sliding blocks [0, 60)
  CHECK(nulls(cache.block_table(1, 0)) == 60);
  KvRequest b = prompt_of(2, 1100);
  b.prefix_hashes = hashes;
  b.prefix_block_tokens = 512;
  // Full attention hits the 64 prefix blocks; the sliding group's 8 blocks before block 64 ([56,
  // 64)) are cached (freed ones keep their hashes), so the hit is 64 blocks, 1,024 tokens.
  CHECK(cache.find_cached_prefix(b) == 1024);
  REQUIRE(cache.allocate_slots(b, 1100 - 1024));
  // The sliding group takes only the blocks of the window: (1024 − 127) // 16 = 56 lead with null.
  CHECK(nulls(cache.block_table(2, 0)) == 56);
  CHECK(cache.block_table(2, 0).size() == 69);
  cache.check_invariants();
  CHECK(cache.free(1));
  CHECK(cache.free(2));
  cache.check_invariants();
  // Without the window's blocks cached there is no hit, however long the full-attention one. A pool
  // of 99 usable blocks; request c (650 tokens, the same prefix) takes 41 + 41 (ids 1-41 sliding,
  // 42-82 full), its decode frees sliding ids 32..1, and free() the rest, tail first.
  PagedKvCache small(100, 16, true, {128, 0});
  KvRequest c = prompt_of(3, 650);
  c.prefix_hashes = hashes;
  c.prefix_block_tokens = 512;
  REQUIRE(small.allocate_slots(c, 650));
  KvRequest c_decode = c;
  c_decode.num_tokens = 651;
  c_decode.num_computed_tokens = 650;
  REQUIRE(small.allocate_slots(c_decode, 1));
  CHECK(small.free(3));
  KvRequest d = prompt_of(4, 1100);
  d.prefix_hashes = hashes;
  d.prefix_block_tokens = 512;
  // Blocks 0-39 (640 tokens) are cached in both groups; the sliding run [32, 40) ends the hit.
  CHECK(small.find_cached_prefix(d) == 640);
  // Request e (464 tokens, 29 blocks a group) pops the 17 never-used blocks, then sliding ids 32..1
  // and 41..33: every sliding block of the prefix is evicted, the full group's stay cached.
  REQUIRE(small.allocate_slots(prompt_of(5, 464), 464));
  CHECK(small.counters().evictions == 40);  // ids 1-40: the 41st block of c was never full, never hashed
  CHECK(small.free(5));
  CHECK(small.find_cached_prefix(d) == 0);
  small.check_invariants();
}

TEST_CASE("hybrid paged KV cache: a warm cache allocates nothing while windows slide") {
  PagedKvCache cache(128, 16, true, {32, 0});
  std::vector<std::vector<std::uint64_t>> hashes;
  for (std::uint64_t id = 0; id < 32; ++id) hashes.push_back({id % 3, 10 + id % 5});
  std::vector<KvRequest> reqs(32);
  std::vector<bool> live(32, false);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    reqs[i] = prompt_of(i, static_cast<Tokens>(40 + 37 * i % 200));
    reqs[i].prefix_hashes = hashes[i];
    reqs[i].prefix_block_tokens = 128;
  }
  auto run = [&](int steps) {
    for (int t = 0; t < steps; ++t) {
      const std::size_t i = static_cast<std::size_t>(t * 7) % reqs.size();
      KvRequest& kv = reqs[i];
      if (live[i]) {
        if (t % 4 != 0 && kv.num_tokens < kv.prompt_tokens + 40) {  // a decode: the window slides
          kv.num_computed_tokens = kv.num_tokens++;
          if (cache.allocate_slots(kv, 1)) continue;
        }
        cache.free(kv.id);
        live[i] = false;
        continue;
      }
      kv.num_tokens = kv.prompt_tokens;
      kv.num_computed_tokens = 0;
      const Tokens hit = cache.find_cached_prefix(kv);
      live[i] = cache.allocate_slots(kv, kv.num_tokens - hit);
    }
  };
  run(50'000);  // warm-up, twice: tables, scratch and spare states reach their high-water marks
  run(50'000);
  const std::size_t before = headroom::test::heap_allocations();
  run(50'000);
  CHECK(headroom::test::heap_allocations() == before);
  CHECK(cache.counters().evictions > 100);
  cache.check_invariants();
}

TEST_CASE("vLLM scheduler on a hybrid pool: sliding blocks freed while serving, fewer preemptions") {
  auto serve = [](std::vector<Tokens> windows) {
    VllmSchedulerLimits l;
    l.max_num_batched_tokens = 512;
    l.max_num_seqs = 64;
    l.block_size = 16;
    l.num_blocks = 401;
    l.enable_prefix_caching = true;
    l.max_model_len = 4096;
    l.group_windows = std::move(windows);
    return headroom::engine::test::serve_uniform(l, 16, 1000, 200, 100000);
  };
  // 400 blocks: two full-attention groups hold two requests of 1,200 tokens (75 blocks each, twice);
  // with one group sliding (128 tokens) a decoding request holds 75 + 9 blocks, four fit.
  const std::int64_t full = serve({0, 0});
  const std::int64_t hybrid = serve({128, 0});
  INFO("preemptions: full " << full << ", hybrid " << hybrid);
  CHECK(full > 0);
  CHECK(hybrid < full);
}
