// Sliding-window models on SGLang (docs/serving-memory-model.md §2.2): Gemma 2 and 3 are not in
// SGLang's is_hybrid_swa_model (python/sglang/srt/configs/model_config.py), so MHATokenToKVPool keeps
// every layer's KV for every token and the window is FlashInfer's alone (gpt-oss's SWA pool:
// test_sglang_swa_pool.cpp).
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/engine/startup.hpp"
#include "tests/engine/deployment_on.hpp"

using namespace headroom;
using namespace headroom::engine;

using headroom::engine::test::on;

TEST_CASE("SGLang sizes Gemma 2's windowed layers as full ones: cell_size over all 42 layers") {
  SglangConfig c;
  c.disable_cuda_graph = true;  // the pool is what is checked here
  StartupResult r = sglang_startup(on("h100-sxm-80gb", "gemma-2-9b-it"), c);
  REQUIRE(r.ok);
  const auto& f = std::get<SglangFigures>(r.figures);
  // get_cell_size_per_token: 8 KV heads × (256 + 256) × 42 layers × 2 bytes.
  CHECK(f.cell_size == 344064);
  // profile_max_num_token: floor(rest / cell_size), every layer counted.
  CHECK(r.kv_tokens == static_cast<std::int64_t>(std::floor(f.rest_memory / 344064.0)));
  // 2 × 42 tensors [size + 1, 8, 256] bf16: no pool of its own for the 21 windowed layers.
  REQUIRE(r.memory.kv_cache.size() == 84);
  CHECK(r.memory.kv_cache[0]->requested_size == static_cast<Bytes>(r.kv_tokens + 1) * 8 * 256 * 2);
}

TEST_CASE("SGLang Gemma 3 1B with --max-total-tokens 100000: 52 tensors of 100,001 rows, 1 KV head of 256") {
  SglangConfig c;
  c.disable_cuda_graph = true;
  c.max_total_tokens = 100000;
  StartupResult r = sglang_startup(on("h100-sxm-80gb", "gemma-3-1b-it"), c);
  REQUIRE(r.ok);
  CHECK(std::get<SglangFigures>(r.figures).cell_size == 1 * 512 * 26 * 2);  // 26,624 B
  CHECK(r.kv_tokens == 100000);
  REQUIRE(r.memory.kv_cache.size() == 52);
  CHECK(r.memory.kv_cache[51]->requested_size == 100001 * 256 * 2);  // 51,200,512 B
  CHECK(r.bytes.kv_cache == 52 * Bytes{51200512});
}

TEST_CASE("SGLang refuses windowed models off FlashInfer") {
  SglangConfig aiter;
  aiter.attention_backend = SglangAttentionBackend::aiter;
  CHECK_THROWS_WITH(resolve(aiter, on("mi300x", "gemma-2-9b-it")),
                    Catch::Contains("aiter's sliding-window path is not modelled"));
  SglangConfig flashinfer;
  CHECK_NOTHROW(resolve(flashinfer, on("h100-sxm-80gb", "gemma-3-1b-it")));
}
