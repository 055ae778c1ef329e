// The engines' version tables (sim/engine/*_versions.cpp, docs/serving-memory-model.md §1.7, §2.6,
// §3.1): each version's start-up accounting and defaults against worked numbers from that
// release's formula.
#include <catch2/catch.hpp>

#include <set>
#include <span>
#include <string>

#include "sim/engine/engine_version.hpp"
#include "sim/engine/startup.hpp"
#include "tests/engine/deployment_on.hpp"

using namespace headroom;
using namespace headroom::engine;

using headroom::engine::test::on;

namespace {

// Every enum value has its own row, names are unique, the last row is `current` (the default).
template <class Rules, class Version>
void check_version_table(std::span<const Rules> table, std::initializer_list<Version> all) {
  std::set<std::string> names;
  for (const Rules& r : table) names.insert(std::string(r.name));
  CHECK(names.size() == table.size());
  CHECK(table.size() == all.size());
  CHECK(table.back().name == "current");
  for (Version v : all) CHECK(version_rules(table, v).version == v);
}

}  // namespace

TEST_CASE("version tables: one row per version, current last, the error lists the rows") {
  check_version_table(vllm_versions(), {VllmVersion::v0_6, VllmVersion::v0_8, VllmVersion::v0_10, VllmVersion::current});
  check_version_table(sglang_versions(), {SglangVersion::v0_4, SglangVersion::current});
  check_version_table(lightllm_versions(), {LightllmVersion::v2_0_0, LightllmVersion::v3_0_0, LightllmVersion::current});
  for (const VllmVersionRules& r : vllm_versions()) CHECK(parse_vllm_version(r.name, "v") == r.version);
  CHECK(parse_sglang_version("0.4", "v") == SglangVersion::v0_4);
  CHECK(SglangConfig{}.version == SglangVersion::current);
  CHECK_THROWS_WITH(parse_vllm_version("0.9", "x.yaml:3:12: key 'engine.version'"),
                    "x.yaml:3:12: key 'engine.version': expected a modelled vLLM version, one of 0.6, 0.8, 0.10, "
                    "current, got '0.9'");
  CHECK_THROWS_WITH(parse_sglang_version("0.5", "x.yaml:3:12: key 'engine.version'"),
                    "x.yaml:3:12: key 'engine.version': expected a modelled SGLang version, one of 0.4, current, got "
                    "'0.5'");
}

TEST_CASE("vLLM 0.8 and 0.10 defaults: batch sizes by device name, piecewise graphs, step-8 capture sizes") {
  // 0.8 (arg_utils.py _set_default_args_v1): "h100"/"h200" in the name, not the memory size.
  CHECK(vllm_batch_defaults(192 * GiB, "mi300x", UsageContext::api_server, VllmBatchDefaultsRule::h100_h200_by_name) ==
        VllmBatchDefaults{2048, 256});
  CHECK(vllm_batch_defaults(192 * GiB, "mi300x", UsageContext::api_server) == VllmBatchDefaults{8192, 1024});
  CHECK(vllm_batch_defaults(80 * GiB, "h100-sxm-80gb", UsageContext::llm_class,
                            VllmBatchDefaultsRule::h100_h200_by_name) == VllmBatchDefaults{16384, 1024});
  // 0.8: [1, 2, 4] + range(8, 513, 8) = 67 sizes; 0.10 up to min(2 × 64, 512) = 128: 19 sizes; both
  // capped by max_num_batched_tokens.
  std::vector<int> s08 = vllm_cudagraph_capture_sizes(1024, 8192, 0, VllmCaptureSizesRule::step8_to_512);
  CHECK(s08.size() == 67);
  CHECK(s08.back() == 512);
  std::vector<int> s10 = vllm_cudagraph_capture_sizes(64, 8192, 0, VllmCaptureSizesRule::step8_to_twice_max_num_seqs);
  CHECK(s10.size() == 19);
  CHECK(s10.back() == 128);
  CHECK(vllm_cudagraph_capture_sizes(1024, 100, 0, VllmCaptureSizesRule::step8_to_512).back() == 96);
  // Resolved on an H100: PIECEWISE by default before 0.11, FULL_AND_PIECEWISE now.
  for (VllmVersion v : {VllmVersion::v0_8, VllmVersion::v0_10, VllmVersion::current}) {
    VllmConfig c;
    c.version = v;
    resolve(c, on("h100-sxm-80gb"));
    CHECK(*c.max_num_seqs == 1024);
    CHECK(c.cudagraph_mode == (v == VllmVersion::current ? CudaGraphMode::full_and_piecewise : CudaGraphMode::piecewise));
    CHECK(c.cudagraph_capture_sizes->back() == 512);
  }
  VllmConfig on_mi300;
  on_mi300.version = VllmVersion::v0_8;
  resolve(on_mi300, on("mi300x"));
  CHECK(*on_mi300.max_num_batched_tokens == 2048);
  CHECK(*on_mi300.max_num_seqs == 256);
}

TEST_CASE("vLLM 0.8 charges all non-torch memory as V0 did, 0.10 the NCCL buffers made after its snapshot") {
  Deployment d = on("h100-sxm-80gb");
  d.other_processes = 2 * GiB;
  VllmConfig v06, v08;
  v06.version = VllmVersion::v0_6;
  v08.version = VllmVersion::v0_8;
  v08.cudagraph_mode = v06.cudagraph_mode = CudaGraphMode::none;  // the accounting alone
  StartupResult a = vllm_startup(d, v06);
  StartupResult b = vllm_startup(d, v08);
  REQUIRE(a.ok);
  REQUIRE(b.ok);
  const auto& f6 = std::get<VllmFigures>(a.figures);
  const auto& f8 = std::get<VllmFigures>(b.figures);
  // The same profile (8192 tokens, 1024 sequences on an H100 by either rule), the same accounting:
  // available = total × 0.9 − (weights + torch peak + (used − torch allocated)).
  CHECK(f8.available_kv == f6.available_kv);
  CHECK(f8.available_kv == static_cast<std::int64_t>(f8.requested) -
                               static_cast<std::int64_t>(f8.model_memory_usage + f8.torch_peak_increase +
                                                         f8.non_torch_increase));
  CHECK(f8.non_torch_increase >= 300 * MiB + 2 * GiB + 64 * MiB);
  // V1's blocks and its one-request check: 0.8's log says "GPU KV cache size", V0's "# GPU blocks".
  CHECK(b.kv_blocks == f8.available_kv / static_cast<std::int64_t>(16 * 128 * KiB));
  CHECK(b.kv_tokens == b.kv_blocks * 16);

  // TP2: 0.10 takes its snapshot before NCCL starts, so the communicators' buffers count in its
  // non-torch growth; current starts NCCL first.
  Deployment tp2 = on("h100-sxm-80gb", "Llama-3.1-8B", 2);
  VllmConfig v10, now;
  v10.version = VllmVersion::v0_10;
  v10.cudagraph_mode = now.cudagraph_mode = CudaGraphMode::none;
  StartupResult c = vllm_startup(tp2, v10);
  StartupResult e = vllm_startup(tp2, now);
  REQUIRE(c.ok);
  REQUIRE(e.ok);
  const Bytes nccl = e.parallel.communicators.outside_torch();
  REQUIRE(nccl > 0);
  const auto& f10 = std::get<VllmFigures>(c.figures);
  const auto& fnow = std::get<VllmFigures>(e.figures);
  CHECK(f10.non_torch_increase == fnow.non_torch_increase + nccl);
  CHECK(fnow.available_kv - f10.available_kv == static_cast<std::int64_t>(nccl));
}

TEST_CASE("vLLM 0.8 starts where 0.10 refuses: its init_device has no free-memory check") {
  Deployment d = on("h100-sxm-80gb");
  d.other_processes = 10 * GiB;  // free < 0.9 × total
  VllmConfig v08, v10;
  v08.version = VllmVersion::v0_8;
  v10.version = VllmVersion::v0_10;
  v08.cudagraph_mode = CudaGraphMode::none;
  StartupResult refused = vllm_startup(d, v10);
  CHECK_FALSE(refused.ok);
  CHECK(refused.stage == StartupStage::memory_check);
  StartupResult started = vllm_startup(d, v08);
  REQUIRE(started.ok);
  CHECK(std::get<VllmFigures>(started.figures).non_torch_increase >= 300 * MiB + 10 * GiB);
  // MLA and sliding-window models are modelled for current only.
  CHECK_THROWS_WITH(vllm_startup(on("h200-141gb", "DeepSeek-V3", 8), v10),
                    "vllm version 0.10: model 'DeepSeek-V3' uses MLA, which this simulator models only for vLLM current");
}

TEST_CASE("SGLang 0.4 defaults: mem_fraction_static by tp, 8192 / 160 above 25,000 MiB, graphs up to 160") {
  CHECK(sglang_0_4_mem_fraction_static(1) == 0.88);
  CHECK(sglang_0_4_mem_fraction_static(2) == 0.87);
  CHECK(sglang_0_4_mem_fraction_static(4) == 0.85);
  CHECK(sglang_0_4_mem_fraction_static(8) == 0.81);
  CHECK(sglang_0_4_mem_fraction_static(16) == 0.79);
  const auto by_tp = SglangMemoryDefaultsRule::by_tp_size;
  CHECK(sglang_gpu_defaults(81559, 1, by_tp) == SglangGpuDefaults{8192, 160});
  CHECK(sglang_gpu_defaults(24564, 1, by_tp) == SglangGpuDefaults{2048, 8});
  CHECK(sglang_gpu_defaults(24564, 4, by_tp) == SglangGpuDefaults{2048, 80});
  CHECK(sglang_gpu_defaults(std::nullopt, 1, by_tp) == SglangGpuDefaults{8192, 160});
  // [1, 2, 4, 8] + range(16, 161, 8): 23 sizes; above 81,920 MiB without DP up to 256, then cut at
  // cuda_graph_max_bs; a pool of 101 rows adds 100 and 101.
  const auto up_to_160 = SglangGraphSizesRule::up_to_160;
  CHECK(sglang_cuda_graph_batch_sizes(160, 2049, up_to_160, 81559.0, 1).size() == 23);
  CHECK(sglang_cuda_graph_batch_sizes(256, 2049, up_to_160, 143156.0, 1).back() == 256);
  CHECK(sglang_cuda_graph_batch_sizes(256, 2049, up_to_160, 143156.0, 2).back() == 160);
  CHECK(sglang_cuda_graph_batch_sizes(160, 101, up_to_160, 81559.0, 1) ==
        std::vector<int>{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 100, 101});
}

TEST_CASE("SGLang 0.4 on an H100: MFS 0.88 sizes the pool, max_num_reqs + 1 request rows, each graph keeps its logits") {
  const Deployment d = on("h100-sxm-80gb");  // Llama-3.1-8B: 128 KiB of KV a token
  SglangConfig old_config;
  old_config.version = SglangVersion::v0_4;
  old_config.gpu_memory_capacity_mib = 81559;  // nvidia-smi's H100-80G
  SglangConfig now_config = old_config;
  now_config.version = SglangVersion::current;
  StartupResult old = sglang_startup(d, old_config);
  StartupResult now = sglang_startup(d, now_config);
  REQUIRE(old.ok);
  REQUIRE(now.ok);
  const auto& fo = std::get<SglangFigures>(old.figures);
  const auto& fn = std::get<SglangFigures>(now.figures);
  CHECK(fo.mem_fraction_static == 0.88);
  CHECK(fn.mem_fraction_static == 0.835);
  // profile_max_num_token: floor((available − free × (1 − MFS)) / cell), the same weights.
  CHECK(old.kv_tokens == sglang_profile_max_num_token(fo.total_gpu_memory, fo.available_gpu_memory, 0.88, 128 * KiB));
  CHECK(fo.total_gpu_memory == fn.total_gpu_memory);
  // 0.045 of the free memory more: about 3.55 GiB, 29k tokens.
  const double extra = 0.045 * static_cast<double>(fo.total_gpu_memory) / static_cast<double>(128 * KiB);
  CHECK(static_cast<double>(old.kv_tokens - now.kv_tokens) == Approx(extra).margin(2));
  // ReqToTokenPool(size = max_num_reqs + 1): one more int32 row of context + 4.
  CHECK(fo.max_num_reqs == 2048);
  CHECK(old.bytes.request_pool >= sglang_req_to_token_pool_bytes(2049, 131072));
  CHECK(old.bytes.request_pool < sglang_req_to_token_pool_bytes(2049, 131072) + 2 * MiB);
  // Graphs up to 160, each keeping its own fp32 logits; current shares one buffer of max_bs rows.
  CHECK(old.graph_batch_sizes.size() == 23);
  CHECK(old.graph_batch_sizes.back() == 160);
  CHECK(now.graph_batch_sizes.back() == 256);
  CHECK(old.memory.engine_buffers.empty());
  REQUIRE(now.memory.engine_buffers.size() == 1);
  // Σ over the 23 sizes of bs × V × 4 B is kept in the pool (1,687 rows × 128,256 × 4 B = 825 MiB).
  CHECK(old.bytes.graph_pool >= 1687ull * 128256 * 4);
}

TEST_CASE("LightLLM 2.0.0: 6000 tokens by default, K then V tensors per layer, no graphs and no check prefill") {
  const Deployment d = on("h100-sxm-80gb");  // Llama-3.1-8B: 8 KV heads × 128 × 2 B = 2 KiB of K a token a layer
  LightllmConfig c;
  c.version = LightllmVersion::v2_0_0;
  StartupResult r = lightllm_startup(d, c);
  REQUIRE(r.ok);
  const auto& used = std::get<LightllmConfig>(r.config);
  CHECK(*used.max_total_token_num == 6000);
  CHECK(*used.batch_max_tokens == 16384);  // max(6000 / 6, max_req_total_len)
  CHECK(used.disable_cudagraph);
  CHECK(used.disable_check_max_len_infer);
  CHECK(r.kv_tokens == 6000);
  REQUIRE(r.memory.kv_cache.size() == 64);  // 32 K tensors, then 32 V tensors
  for (const alloc::Block* b : r.memory.kv_cache) {
    CHECK(b->size >= 6000ull * 2 * KiB);  // 11.72 MiB, rounded up to the 2 MiB the allocator takes
    CHECK(b->size < 6000ull * 2 * KiB + 2 * MiB);
  }
  CHECK(r.graph_batch_sizes.empty());
  // mem_state, indexes, then req_state bool [1008]; req_to_token_indexs int32 [1008, 16392].
  REQUIRE(r.memory.engine_buffers.size() == 3);
  CHECK(r.bytes.request_pool >= 1008ull * 16392 * 4);
  CHECK(r.bytes.request_pool < 1008ull * 16392 * 4 + 2 * MiB);
}
