// Engine knobs and their defaults: vLLM's batch defaults by device (§1.3) and capture sizes (§1.5),
// SGLang's mem_fraction_static heuristic (§2.1) and graph batch sizes (§2.3), LightLLM's
// batch_max_tokens and graph sizes (§3), and resolve()'s filled defaults and input errors.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/model/catalogue.hpp"
#include "tests/engine/deployment_on.hpp"

using namespace headroom;
using namespace headroom::engine;

using headroom::engine::test::on;

namespace {

const FilledDefault* filled(const std::vector<FilledDefault>& list, const std::string& field) {
  for (const FilledDefault& f : list)
    if (f.field == field) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("vLLM batch defaults: 8192 tokens and 1024 sequences on GPUs of 70 GiB or more except A100 (§1.3)") {
  CHECK(vllm_batch_defaults(79 * GiB, "h100-sxm-80gb", UsageContext::api_server) == VllmBatchDefaults{8192, 1024});
  CHECK(vllm_batch_defaults(79 * GiB, "NVIDIA A100-SXM4-80GB", UsageContext::api_server) ==
        VllmBatchDefaults{2048, 256});
  CHECK(vllm_batch_defaults(24 * GiB, "rtx-4090", UsageContext::api_server) == VllmBatchDefaults{2048, 256});
  CHECK(vllm_batch_defaults(79 * GiB, "h100-sxm-80gb", UsageContext::llm_class) == VllmBatchDefaults{16384, 1024});
  CHECK(vllm_batch_defaults(79 * GiB, "a100-80gb", UsageContext::llm_class) == VllmBatchDefaults{8192, 256});
}

TEST_CASE("vLLM capture sizes: 51 sizes up to 512, capped by max_num_seqs x 2 and the token budget (§1.5)") {
  std::vector<int> sizes = vllm_cudagraph_capture_sizes(256, 8192);
  REQUIRE(sizes.size() == 51);
  CHECK(sizes[0] == 1);
  CHECK(sizes[1] == 2);
  CHECK(sizes[2] == 4);
  CHECK(sizes[3] == 8);
  CHECK(sizes[33] == 248);
  CHECK(sizes[34] == 256);
  CHECK(sizes[35] == 272);
  CHECK(sizes.back() == 512);
  CHECK(vllm_cudagraph_capture_sizes(1024, 8192) == sizes);
  CHECK(vllm_cudagraph_capture_sizes(1, 8192) == std::vector<int>{1, 2});
  CHECK(vllm_cudagraph_capture_sizes(256, 40) == std::vector<int>{1, 2, 4, 8, 16, 24, 32, 40});
  CHECK(vllm_cudagraph_capture_sizes(64, 8192, 1).back() == 256);  // 64 × 2 × (1 + 1)
}

TEST_CASE("vLLM resolve on an H100 fills the API-server defaults, block 16 and the model's context") {
  Deployment d = on("h100-sxm-80gb");
  VllmConfig c;
  std::vector<FilledDefault> f = resolve(c, d);
  CHECK(*c.max_num_batched_tokens == 8192);
  CHECK(*c.max_num_seqs == 1024);
  CHECK(*c.block_size == 16);
  CHECK(*c.max_model_len == 131072);
  CHECK(*c.attention_backend == VllmAttentionBackend::flash_attn);
  CHECK(c.cudagraph_capture_sizes->size() == 51);
  REQUIRE(filled(f, "max_num_seqs"));
  CHECK(filled(f, "max_num_seqs")->value == "1024");
  CHECK(filled(f, "max_model_len")->why == "the model's max_position_embeddings");
  CHECK(filled(f, "gpu_memory_utilization") == nullptr);  // a plain default, not filled
  // Resolving again changes nothing and fills nothing.
  VllmConfig again = c;
  CHECK(resolve(again, d).empty());
  CHECK(again.max_num_seqs == c.max_num_seqs);
}

TEST_CASE("vLLM MLA backends force their block size: FlashMLA 64, CUTLASS MLA 128 (§1.2)") {
  Deployment d = on("h200-141gb", "DeepSeek-V3", 8);
  VllmConfig c;
  resolve(c, d);
  CHECK(*c.attention_backend == VllmAttentionBackend::flashmla);
  CHECK(*c.block_size == 64);
  VllmConfig cutlass;
  cutlass.attention_backend = VllmAttentionBackend::cutlass_mla;
  cutlass.block_size = 16;
  std::vector<FilledDefault> f = resolve(cutlass, d);
  CHECK(*cutlass.block_size == 128);
  REQUIRE(filled(f, "block_size"));
  CHECK(filled(f, "block_size")->why == "forced by CUTLASS_MLA (§1.2)");
  CHECK(vllm_forced_block_size(VllmAttentionBackend::triton_mla) == std::nullopt);
}

TEST_CASE("vLLM enforce_eager turns CUDA graphs off") {
  Deployment d = on("h100-sxm-80gb");
  VllmConfig c;
  c.enforce_eager = true;
  std::vector<FilledDefault> f = resolve(c, d);
  CHECK(c.cudagraph_mode == CudaGraphMode::none);
  REQUIRE(filled(f, "cudagraph_mode"));
  CHECK(filled(f, "cudagraph_mode")->value == "NONE");
}

TEST_CASE("SGLang mem_fraction_static on an H100-80G: 0.835 at TP1, 0.818 at TP8 (§2.1)") {
  CHECK(sglang_gpu_defaults(81559, 1) == SglangGpuDefaults{8192, 256});
  CHECK(sglang_gpu_defaults(81559, 8) == SglangGpuDefaults{8192, 512});
  CHECK(sglang_reserved_memory_mib(81559, 1, 8192, 256) == 13440.0);
  CHECK(sglang_reserved_memory_mib(81559, 8, 8192, 512) == 14848.0);
  CHECK(sglang_default_mem_fraction_static(81559.0, 1) == 0.835);
  CHECK(sglang_default_mem_fraction_static(81559.0, 8) == 0.818);
  // The torch-reported capacity of the same GPU (81,090 MiB) rounds to 0.834.
  CHECK(sglang_default_mem_fraction_static(81090.0, 1) == 0.834);
  CHECK(sglang_default_mem_fraction_static(std::nullopt, 1) == 0.88);
}

TEST_CASE("SGLang §2.1 table rows and the 10 GiB floor above 60 GiB") {
  CHECK(sglang_gpu_defaults(16 * 1024, 1) == SglangGpuDefaults{2048, 8});
  CHECK(sglang_gpu_defaults(24 * 1024, 1) == SglangGpuDefaults{2048, 24});
  CHECK(sglang_gpu_defaults(24 * 1024, 4) == SglangGpuDefaults{2048, 80});
  CHECK(sglang_gpu_defaults(40 * 1024, 2) == SglangGpuDefaults{4096, 32});
  CHECK(sglang_gpu_defaults(40 * 1024, 8) == SglangGpuDefaults{4096, 160});
  CHECK(sglang_gpu_defaults(143156, 1) == SglangGpuDefaults{8192, 256});
  CHECK(sglang_gpu_defaults(196 * 1024, 1) == SglangGpuDefaults{16384, 512});
  CHECK(sglang_gpu_defaults(std::nullopt, 1) == SglangGpuDefaults{4096, 160});
  // 512 + 3072 + 64 + 128 = 3,776 MiB on a 40 GiB GPU; the floor would make it 10,240 above 60 GiB.
  CHECK(sglang_reserved_memory_mib(40 * 1024, 1, 2048, 32) == 3776.0);
  CHECK(sglang_reserved_memory_mib(64 * 1024, 1, 2048, 32) == 10240.0);
  // Chunked prefill off: max_prefill_tokens takes its place.
  CHECK(sglang_reserved_memory_mib(40 * 1024, 1, -1, 32, 1, 16384) == 512 + 24576 + 64 + 128);
}

TEST_CASE("SGLang aiter multiplies mem_fraction_static by 0.85 above 8192 tokens of context (§2.5)") {
  CHECK(sglang_aiter_mem_fraction_static(0.835, SglangAttentionBackend::aiter, 131072) == Approx(0.70975));
  CHECK(sglang_aiter_mem_fraction_static(0.835, SglangAttentionBackend::aiter, 8192) == 0.835);
  CHECK(sglang_aiter_mem_fraction_static(0.835, SglangAttentionBackend::flashinfer, 131072) == 0.835);
}

TEST_CASE("SGLang graph batch sizes: 36 up to 256, 52 up to 512, bounded by the request pool (§2.3)") {
  std::vector<int> to256 = sglang_cuda_graph_batch_sizes(256, 2048);
  REQUIRE(to256.size() == 36);
  CHECK(std::vector<int>(to256.begin(), to256.begin() + 7) == std::vector<int>{1, 2, 4, 8, 12, 16, 24});
  CHECK(to256.back() == 256);
  std::vector<int> to512 = sglang_cuda_graph_batch_sizes(512, 2048);
  REQUIRE(to512.size() == 52);
  CHECK(to512[36] == 272);
  CHECK(to512[50] == 496);
  CHECK(to512.back() == 512);
  CHECK(sglang_cuda_graph_batch_sizes(1024, 4096).back() == 1024);
  std::vector<int> small_pool = sglang_cuda_graph_batch_sizes(256, 100);
  CHECK(small_pool.back() == 100);
  CHECK(small_pool[small_pool.size() - 2] == 99);
  CHECK(small_pool[small_pool.size() - 3] == 96);
}

TEST_CASE("SGLang resolve fills gpu_mem, the §2.1 defaults and the backend by vendor") {
  Deployment d = on("h100-sxm-80gb");
  SglangConfig c;
  std::vector<FilledDefault> f = resolve(c, d);
  CHECK(*c.gpu_memory_capacity_mib == 81089.875);  // 85,028,896,768 B
  CHECK(*c.chunked_prefill_size == 8192);
  CHECK(*c.cuda_graph_max_bs == 256);
  CHECK(*c.mem_fraction_static == 0.834);
  CHECK(*c.context_length == 131072);
  CHECK(*c.attention_backend == SglangAttentionBackend::flashinfer);
  REQUIRE(filled(f, "mem_fraction_static"));
  CHECK(filled(f, "mem_fraction_static")->why == "round((81090 - 13440 reserved MiB) / 81090, 3) (§2.1)");

  SglangConfig smi;
  smi.gpu_memory_capacity_mib = 81559;  // what nvidia-smi reports on the same GPU (§2.1)
  resolve(smi, d);
  CHECK(*smi.mem_fraction_static == 0.835);

  SglangConfig amd;
  resolve(amd, on("mi300x"));
  CHECK(*amd.attention_backend == SglangAttentionBackend::aiter);
  CHECK(*amd.chunked_prefill_size == 16384);
  CHECK(*amd.cuda_graph_max_bs == 512);
  // A given fraction is kept by resolve; the aiter ×0.85 happens at start-up.
  SglangConfig given;
  given.mem_fraction_static = 0.8;
  given.attention_backend = SglangAttentionBackend::aiter;
  resolve(given, d);
  CHECK(*given.mem_fraction_static == 0.8);
}

TEST_CASE("SGLang torch_native turns CUDA graphs off, as server_args.py does, for dense models only") {
  Deployment d = on("h100-sxm-80gb");
  SglangConfig c;
  c.attention_backend = SglangAttentionBackend::torch_native;
  std::vector<FilledDefault> f = resolve(c, d);
  CHECK(c.disable_cuda_graph);
  REQUIRE(filled(f, "disable_cuda_graph"));
  CHECK(filled(f, "disable_cuda_graph")->why == "SGLang disables CUDA graphs with the torch_native backend");
  SglangConfig off;
  off.attention_backend = SglangAttentionBackend::torch_native;
  off.disable_cuda_graph = true;
  const std::vector<FilledDefault> kept = resolve(off, d);
  CHECK_FALSE(filled(kept, "disable_cuda_graph"));  // already off: nothing filled
  CHECK(parse_sglang_attention_backend("torch_native", "b") == SglangAttentionBackend::torch_native);
  CHECK(sglang_attention_backend_name(SglangAttentionBackend::torch_native) == "torch_native");
}

TEST_CASE("LightLLM defaults: batch_max_tokens 8448, 46 graph sizes up to 256 (§3)") {
  CHECK(lightllm_default_batch_max_tokens(16384, 4096, true) == 8448);
  CHECK(lightllm_default_batch_max_tokens(16384, 4096, false) == 16384);
  CHECK(lightllm_default_batch_max_tokens(4096, 4096, true) == 4096);
  std::vector<int> sizes = lightllm_graph_batch_sizes(256, 32, 16);
  REQUIRE(sizes.size() == 46);
  CHECK(sizes[31] == 32);
  CHECK(sizes[32] == 48);
  CHECK(sizes[44] == 240);
  CHECK(sizes.back() == 256);
  CHECK(lightllm_graph_batch_sizes(16, 32, 16).size() == 16);
  CHECK(lightllm_graph_batch_sizes(40, 32, 16).back() == 40);

  Deployment d = on("h100-sxm-80gb");
  LightllmConfig c;
  std::vector<FilledDefault> f = resolve(c, d);
  CHECK(*c.batch_max_tokens == 8448);
  CHECK(*c.graph_max_len_in_batch == 16384);
  CHECK(f.size() == 2);
}

TEST_CASE("bad knobs are input errors naming the engine and the field") {
  Deployment d = on("h100-sxm-80gb");
  auto vllm_error = [&](VllmConfig c) {
    try {
      resolve(c, d);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  VllmConfig util;
  util.gpu_memory_utilization = 1.5;
  CHECK(vllm_error(util) == "vllm gpu_memory_utilization: expected a value in (0, 1], got 1.5");
  VllmConfig seqs;
  seqs.max_num_seqs = 10000;
  CHECK(vllm_error(seqs) == "vllm max_num_batched_tokens: 8192 must be at least max_num_seqs (10000)");
  VllmConfig mla;
  mla.attention_backend = VllmAttentionBackend::flashmla;
  CHECK(vllm_error(mla) ==
        "vllm attention_backend: FLASHMLA is an MLA backend, but model 'Llama-3.1-8B' has no MLA");
  VllmConfig len;
  len.max_model_len = 200000;
  CHECK(vllm_error(len) == "vllm max_model_len: 200000 is above the model's max_position_embeddings (131072)");
  VllmConfig sizes;
  sizes.cudagraph_capture_sizes = std::vector<int>{1, 0};
  CHECK(vllm_error(sizes) == "vllm cudagraph_capture_sizes: expected batch sizes of at least 1, got 0");

  SglangConfig mfs;
  mfs.mem_fraction_static = 1.2;
  CHECK_THROWS_WITH(resolve(mfs, d), "sglang mem_fraction_static: expected a value in (0, 1), got 1.2");
  SglangConfig page;
  page.page_size = 0;
  CHECK_THROWS_WITH(resolve(page, d), "sglang page_size: expected at least 1, got 0");
  SglangConfig aiter_mla;
  aiter_mla.attention_backend = SglangAttentionBackend::aiter;
  CHECK_THROWS_WITH(resolve(aiter_mla, on("h200-141gb", "DeepSeek-V3", 8)),
                    "sglang attention_backend: aiter's MLA path is not modelled (model 'DeepSeek-V3' uses MLA); "
                    "use flashinfer");

  LightllmConfig frac;
  frac.mem_fraction = 0;
  CHECK_THROWS_WITH(resolve(frac, d), "lightllm mem_fraction: expected a value in (0, 1], got 0");
  LightllmConfig reqs;
  reqs.running_max_req_size = 0;
  CHECK_THROWS_WITH(resolve(reqs, d), "lightllm running_max_req_size: expected at least 1, got 0");

  Deployment tp0 = d;
  tp0.tp = 0;
  CHECK_THROWS_WITH(resolve(frac, tp0), "deployment tp: expected at least 1, got 0");
}

TEST_CASE("engine option names parse in the engines' spellings and reject others") {
  CHECK(parse_cudagraph_mode("FULL_AND_PIECEWISE", "cudagraph_mode") == CudaGraphMode::full_and_piecewise);
  CHECK(parse_cudagraph_mode("piecewise", "cudagraph_mode") == CudaGraphMode::piecewise);
  CHECK_THROWS_WITH(parse_cudagraph_mode("ALL", "vllm.cudagraph_mode"),
                    "vllm.cudagraph_mode: expected one of NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, "
                    "FULL_AND_PIECEWISE, got 'ALL'");
  CHECK(parse_vllm_attention_backend("FLASHINFER", "b") == VllmAttentionBackend::flashinfer);
  CHECK(parse_vllm_attention_backend("flash_attn", "b") == VllmAttentionBackend::flash_attn);
  CHECK_THROWS_WITH(parse_vllm_attention_backend("XFORMERS", "vllm.attention_backend"),
                    "vllm.attention_backend: expected one of FLASH_ATTN, FLASHINFER, FLASHMLA, CUTLASS_MLA, "
                    "TRITON_MLA, ROCM_AITER_MLA, got 'XFORMERS'");
  CHECK(parse_sglang_attention_backend("aiter", "b") == SglangAttentionBackend::aiter);
  CHECK(parse_sglang_attention_backend("fa3", "b") == SglangAttentionBackend::fa3);
  CHECK_THROWS_WITH(parse_sglang_attention_backend("triton", "sglang.attention_backend"),
                    "sglang.attention_backend: expected one of flashinfer, aiter, torch_native, fa3, got 'triton'");
  CHECK(parse_usage_context("api-server", "u") == UsageContext::api_server);
  CHECK_THROWS_WITH(parse_usage_context("cli", "vllm.usage_context"),
                    "vllm.usage_context: expected one of api_server, llm_class, got 'cli'");
  CHECK(engine_of(EngineConfig{SglangConfig{}}) == model::Engine::sglang);
  CHECK(engine_of(EngineConfig{LightllmConfig{}}) == model::Engine::lightllm);
}

TEST_CASE("vllm mla_decode_out: a per-layer or shared buffer on a model without MLA is refused") {
  VllmConfig c;
  c.mla_decode_out = model::DecodeOutBuffer::per_layer;
  Deployment d = on("h100-sxm-80gb");
  CHECK_THROWS_WITH(resolve(c, d), "vllm mla_decode_out: 'per-layer' applies to MLA models only, and model "
                                   "'Llama-3.1-8B' is not one");
  VllmConfig m;
  m.mla_decode_out = model::DecodeOutBuffer::shared;
  CHECK_NOTHROW(resolve(m, on("h200-141gb", "DeepSeek-V3", 8)));
}
