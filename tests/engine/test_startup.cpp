// Engine start-up through the caching allocator model against the worked numbers of
// docs/serving-memory-model.md: §2.3 request pool, §2.5 aiter workspace, §8 end-to-end on one H100-80G
// for vLLM, SGLang and LightLLM, and start-ups that fail (out of memory or an engine check) with
// the engine's or PyTorch's message.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "sim/engine/startup.hpp"
#include "sim/model/catalogue.hpp"
#include "tests/engine/deployment_on.hpp"

using namespace headroom;
using namespace headroom::engine;

using headroom::engine::test::on;

namespace {

double gib(Bytes b) { return static_cast<double>(b) / static_cast<double>(GiB); }

}  // namespace

TEST_CASE("SGLang ReqToTokenPool: 2048 requests of 131,072 tokens take 1.0 GiB (§2.3)") {
  CHECK(sglang_req_to_token_pool_bytes(2048, 131072) == 2048ull * 131076 * 4);
  CHECK(gib(sglang_req_to_token_pool_bytes(2048, 131072)) == Approx(1.0).epsilon(0.001));
  // §8: ≈415k tokens at 131,072 context estimate 1,620 requests, clamped up to 2048; the cap is 4096.
  CHECK(sglang_max_num_reqs(415000, 131072) == 2048);
  CHECK(sglang_max_num_reqs(2'000'000, 131072) == 4096);
  CHECK(sglang_max_num_reqs(1'000'000, 131072) == 3906);
  CHECK(sglang_max_running_requests(415000, 2048, std::nullopt) == 2048);
  CHECK(sglang_max_running_requests(3000, 2048, std::nullopt) == 1500);
  CHECK(sglang_max_running_requests(415000, 64, 64) == 64);
}

TEST_CASE("aiter workspace: 8.125 MiB per request, 16.25 GiB at 2048, 4.06 GiB at TP8, 48.5 GiB at 256k (§2.5)") {
  CHECK(aiter_workspace_bytes(1, 32, 128, 131072) == 8 * MiB + 128 * KiB);  // 32 × 512 × 520 B
  CHECK(aiter_workspace_bytes(2048, 32, 128, 131072) == 16 * GiB + 256 * MiB);
  CHECK(gib(aiter_workspace_bytes(2048, 8, 128, 131072)) == Approx(4.0625));
  CHECK(gib(aiter_workspace_bytes(4096, 16, 192, 262144)) == Approx(48.5).epsilon(0.001));
  // The partition count rounds up: 8,193 tokens need 33 partitions of 256.
  CHECK(aiter_workspace_bytes(1, 1, 128, 8193) == 33 * 520);
}

TEST_CASE("the engines' KV arithmetic as pure functions") {
  // vLLM §1.2: Llama-3.1-8B pages are 64 KiB per layer, 2 MiB per block over 32 layers.
  CHECK(vllm_num_blocks(10 * static_cast<std::int64_t>(GiB), 64 * KiB, 32) == 5120);
  CHECK(vllm_num_blocks(-1, 64 * KiB, 32) == 0);
  CHECK(vllm_request_kv_bytes(131072, 16, 64 * KiB, 32) == 16 * GiB);
  CHECK(vllm_request_kv_bytes(17, 16, 64 * KiB, 32) == 4 * MiB);
  CHECK(vllm_estimate_max_model_len(static_cast<std::int64_t>(5 * GiB), 16, 64 * KiB, 32) == 40960);
  // SGLang §2.2: rest = available − total × (1 − MFS); with nothing else on the GPU, free × MFS − weights.
  CHECK(sglang_profile_max_num_token(100 * GiB, 60 * GiB, 0.8, 128 * KiB) == 40 * 8192);
  CHECK(sglang_profile_max_num_token(100 * GiB, 60 * GiB, 0.8, 128 * KiB, 64) == 40 * 8192);
  CHECK(sglang_profile_max_num_token(100 * GiB, 60 * GiB + 100 * KiB, 0.8, 128 * KiB, 64) == 40 * 8192);
  CHECK(sglang_profile_max_num_token(100 * GiB, 10 * GiB, 0.8, 128 * KiB) == 0);
  // LightLLM §3 and its default request table of ≈63 MiB.
  CHECK(lightllm_kv_tokens(60 * GiB, 80 * GiB, 0.9, 128 * KiB) == 52 * 8192);
  CHECK(lightllm_kv_tokens(5 * GiB, 80 * GiB, 0.9, 128 * KiB) < 0);
  CHECK(lightllm_req_to_token_bytes(1000, 8448, 16384) == 1009ull * 16392 * 4);
  CHECK(static_cast<double>(lightllm_req_to_token_bytes(1000, 8448, 16384)) / MiB == Approx(63.09).epsilon(0.001));
}

TEST_CASE("§8 vLLM on one H100-80G: KV 51-52 GiB, 420-425k tokens, graphs out of the margin") {
  StartupResult r = vllm_startup(on("h100-sxm-80gb"), VllmConfig{});
  REQUIRE(r.ok);
  CHECK(r.stage == StartupStage::serving);
  const auto& f = std::get<VllmFigures>(r.figures);
  const auto& c = std::get<VllmConfig>(r.config);
  CHECK(*c.max_num_batched_tokens == 8192);
  CHECK(*c.max_num_seqs == 1024);
  CHECK(gib(f.requested) == Approx(0.9 * 79.19).epsilon(0.001));  // 71.27 GiB
  CHECK(gib(f.model_memory_usage) == Approx(14.96).epsilon(0.002));
  // The profile's peak is the native sampler over 1024 rows, inside PyTorch's stable sort: 38 B ×
  // 1024 × 128,256 = 4.65 GiB (§4a; 10 B a row and entry more than the 28 B after the sort, i.e.
  // 1.22 GiB, the stable sort's reverse indices 8 B and cub's alternate buffers 12 B).
  CHECK(gib(f.torch_peak_increase) >= 4.64);
  CHECK(gib(f.torch_peak_increase) <= 4.8);
  CHECK(f.non_torch_increase == kDefaultNonTorchGrowth);
  // 52.75 GiB before the sort's scratch was modelled, less its 1.22 GiB.
  CHECK(gib(static_cast<Bytes>(f.available_kv)) >= 51.0);
  CHECK(gib(static_cast<Bytes>(f.available_kv)) <= 52.0);
  CHECK(r.kv_blocks >= 26300);
  CHECK(r.kv_blocks <= 26500);
  CHECK(r.kv_tokens == r.kv_blocks * 16);
  CHECK(r.kv_tokens >= 420000);
  CHECK(r.kv_tokens <= 425000);
  CHECK(f.page_size == 64 * KiB);
  CHECK(f.max_concurrency == Approx(static_cast<double>(r.kv_blocks) / 8192));
  // One KV tensor per layer, each page_size × num_blocks (2 MiB-rounded segments).
  REQUIRE(r.memory.kv_cache.size() == 32);
  CHECK(r.memory.kv_cache[0]->requested_size == 64 * KiB * static_cast<Bytes>(r.kv_blocks));
  CHECK(r.bytes.kv_cache == 32 * r.memory.kv_cache[0]->size);
  // 51 capture sizes; FULL_AND_PIECEWISE captures them all plus the decode sizes, in one pool.
  CHECK(r.graph_batch_sizes.size() == 51);
  CHECK(r.memory.graph_rng_state.size() == 2);  // the generator's seed and offset, at the first capture only
  CHECK(r.bytes.graph_pool > 0);
  CHECK(r.bytes.graph_pool < 1 * GiB);
  CHECK(f.cudagraph_memory >= r.bytes.graph_pool);
  CHECK(f.suggested_kv_cache_memory < f.available_kv);
  // What the start-up left fits in the device: requested + graphs + the sampler's cached blocks.
  CHECK(r.bytes.reserved + r.bytes.non_torch + r.bytes.device_free == r.memory.device->total());
  r.memory.allocator->check_invariants();
  INFO(fmt::format("vLLM §8: peak {:.3f} GiB, KV {:.3f} GiB, {} blocks, {} tokens, graph pool {:.1f} MiB",
                   gib(f.torch_peak_increase), gib(static_cast<Bytes>(f.available_kv)), r.kv_blocks, r.kv_tokens,
                   static_cast<double>(r.bytes.graph_pool) / MiB));
  CHECK(r.log.size() >= 4);
}

TEST_CASE("§8 SGLang on one H100-80G: MFS 0.835, about 415k tokens, 2048 requests, a 1.0 GiB request pool") {
  SglangConfig c;
  c.gpu_memory_capacity_mib = 81559;  // nvidia-smi's figure, as §2.1 and §8 use it
  StartupResult r = sglang_startup(on("h100-sxm-80gb"), c);
  REQUIRE(r.ok);
  const auto& f = std::get<SglangFigures>(r.figures);
  const auto& resolved = std::get<SglangConfig>(r.config);
  CHECK(f.mem_fraction_static == 0.835);
  CHECK(*resolved.chunked_prefill_size == 8192);
  CHECK(*resolved.cuda_graph_max_bs == 256);
  // §8 reads ≈78.6 GiB free before weights; this profile's context leaves 78.9 GiB.
  CHECK(gib(f.total_gpu_memory) == Approx(78.6).epsilon(0.01));
  CHECK(gib(static_cast<Bytes>(f.rest_memory)) == Approx(50.6).epsilon(0.02));
  CHECK(f.cell_size == 128 * KiB);
  CHECK(static_cast<double>(r.kv_tokens) == Approx(415000).epsilon(0.02));
  CHECK(f.max_num_reqs == 2048);
  CHECK(gib(r.bytes.request_pool) == Approx(1.0).epsilon(0.001));
  CHECK(f.max_running_requests == 2048);
  // 2·L tensors of [size + 1, 8, 128] bf16.
  REQUIRE(r.memory.kv_cache.size() == 64);
  CHECK(r.memory.kv_cache[0]->requested_size == static_cast<Bytes>(r.kv_tokens + 1) * 8 * 128 * 2);
  CHECK(r.bytes.workspaces == 384 * MiB);
  CHECK(r.forward.attention_workspace == 384 * MiB);
  CHECK(r.graph_batch_sizes.size() == 36);
  CHECK(r.graph_batch_sizes.back() == 256);
  CHECK(r.bytes.graph_pool > 0);
  r.memory.allocator->check_invariants();
}

TEST_CASE("§8 LightLLM on one H100-80G: about 456k tokens, then the 8448-token check prefill fits") {
  StartupResult r = lightllm_startup(on("h100-sxm-80gb"), LightllmConfig{});
  REQUIRE(r.ok);
  const auto& f = std::get<LightllmFigures>(r.figures);
  CHECK(f.batch_max_tokens == 8448);
  CHECK(gib(f.free_after_weights) == Approx(63.6).epsilon(0.01));
  CHECK(static_cast<double>(r.kv_tokens) == Approx(456000).epsilon(0.02));
  REQUIRE(r.memory.kv_cache.size() == 1);
  CHECK(r.memory.kv_cache[0]->requested_size == static_cast<Bytes>(r.kv_tokens + 1) * 128 * KiB);
  CHECK(r.bytes.request_pool == round_up(lightllm_req_to_token_bytes(1000, 8448, 16384), 2 * MiB));
  CHECK(r.graph_batch_sizes.size() == 46);
  // The check prefill: 8448 tokens of Llama-3.1-8B activations (≈100 KiB per token, §4a).
  CHECK(static_cast<double>(f.check_peak) / MiB == Approx(8448.0 * 100 / 1024).epsilon(0.1));
  CHECK(r.bytes.activations_peak >= f.check_peak);
  r.memory.allocator->check_invariants();
}

TEST_CASE("aiter at 128k context on a shared MI355X: the workspace does not fit, PyTorch's message") {
  Deployment d = on("mi355x");
  const Bytes free_at_start = 24 * GiB;  // design question 5: only 24 of 288 GiB free
  d.other_processes = d.gpu.capacity_bytes - d.gpu.context_bytes - free_at_start;
  StartupResult r = sglang_startup(d, SglangConfig{});
  REQUIRE_FALSE(r.ok);
  CHECK(r.stage == StartupStage::attention_workspace);
  const auto& f = std::get<SglangFigures>(r.figures);
  const auto& c = std::get<SglangConfig>(r.config);
  CHECK(*c.attention_backend == SglangAttentionBackend::aiter);
  CHECK(f.mem_fraction_static == Approx(*c.mem_fraction_static * 0.85));
  CHECK(f.max_num_reqs == 2048);
  REQUIRE(r.oom);
  CHECK(r.oom->requested == 16 * GiB + 256 * MiB);
  CHECK(r.failure == r.oom->message(true));
  CHECK(r.failure.rfind("HIP out of memory. Tried to allocate 16.25 GiB. GPU 0 has a total capacity of 287.98 GiB", 0) ==
        0);
  // "of which X is free": the 24 GiB less what this start-up holds (all of it reserved by the
  // allocator, plus the cuBLAS workspaces outside it).
  CHECK(r.oom->free == free_at_start - r.bytes.reserved - d.non_torch_growth);
  CHECK(r.failure.find("PYTORCH_HIP_ALLOC_CONF") != std::string::npos);
  // The KV pool and request pool were already allocated: they sit inside the reserved figure.
  CHECK(r.bytes.kv_cache > 0);
  CHECK(r.bytes.request_pool > 0);

  // The same GPU at an 8k context with a 0.8 static fraction: 2048 × 32 × 32 × 520 B ≈ 1.02 GiB fits
  // in the 4.8 GiB margin and start-up completes.
  SglangConfig short_context;
  short_context.context_length = 8192;
  short_context.mem_fraction_static = 0.8;
  StartupResult ok = sglang_startup(d, short_context);
  INFO(ok.failure);
  CHECK(ok.ok);
  CHECK(ok.bytes.workspaces == round_up(aiter_workspace_bytes(std::get<SglangFigures>(ok.figures).max_num_reqs, 32,
                                                                128, 8192),
                                         alloc::kMinBlockSize));
}

TEST_CASE("vLLM refuses to start when other processes leave less than the requested share") {
  Deployment d = on("h100-sxm-80gb");
  d.other_processes = 10 * GiB;
  StartupResult r = vllm_startup(d, VllmConfig{});
  REQUIRE_FALSE(r.ok);
  CHECK(r.stage == StartupStage::memory_check);
  CHECK_FALSE(r.oom);
  CHECK(r.failure ==
        "Free memory on device cuda:0 (68.90/79.19 GiB) on startup is less than desired GPU memory utilization "
        "(0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.");
  CHECK(r.bytes.weights == 0);
}

TEST_CASE("vLLM on a 24 GB GPU cannot hold one 131,072-token request and says how long one may be") {
  StartupResult r = vllm_startup(on("rtx-4090"), VllmConfig{});
  REQUIRE_FALSE(r.ok);
  CHECK(r.stage == StartupStage::kv_cache_sizing);
  const auto& f = std::get<VllmFigures>(r.figures);
  REQUIRE(f.available_kv > 0);
  std::int64_t estimate = vllm_estimate_max_model_len(f.available_kv, 16, 64 * KiB, 32);
  CHECK(r.failure == fmt::format("To serve at least one request with the model's max seq len (131072), 16.00 GiB KV "
                                 "cache is needed, which is larger than the available KV cache memory ({:.2f} GiB). "
                                 "Based on the available memory, the estimated maximum model length is {}. Try "
                                 "increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
                                 "initializing the engine.",
                                 gib(static_cast<Bytes>(f.available_kv)), estimate));
  // With a context that fits, the same GPU starts.
  VllmConfig shorter;
  shorter.max_model_len = 16384;
  StartupResult ok = vllm_startup(on("rtx-4090"), shorter);
  CHECK(ok.ok);
  CHECK(ok.kv_tokens >= 16384);
}

TEST_CASE("vLLM --kv-cache-memory replaces the accounting, FlashInfer adds its 256 MiB workspace") {
  VllmConfig c;
  c.kv_cache_memory_bytes = 20 * GiB;
  c.attention_backend = VllmAttentionBackend::flashinfer;
  c.sampler = model::SamplerKind::flashinfer;
  StartupResult r = vllm_startup(on("h100-sxm-80gb"), c);
  INFO(r.failure);
  REQUIRE(r.ok);
  CHECK(r.kv_blocks == 10240);
  CHECK(r.kv_tokens == 163840);
  CHECK(r.bytes.workspaces == 256 * MiB);
  CHECK(r.forward.attention == model::AttentionBackend::flashinfer);
  // FlashInfer's sampler path needs about half the native one's memory (§4a).
  StartupResult native = vllm_startup(on("h100-sxm-80gb"), VllmConfig{});
  REQUIRE(native.ok);
  CHECK(std::get<VllmFigures>(r.figures).torch_peak_increase <
        std::get<VllmFigures>(native.figures).torch_peak_increase);
}

TEST_CASE("SGLang with too small a static fraction fails with its own message") {
  SglangConfig c;
  c.mem_fraction_static = 0.15;
  StartupResult r = sglang_startup(on("h100-sxm-80gb"), c);
  REQUIRE_FALSE(r.ok);
  CHECK(r.stage == StartupStage::kv_cache_sizing);
  CHECK(r.failure == "Not enough memory. Please try to increase --mem-fraction-static. Current value: "
                     "mem_fraction_static=0.15");
  CHECK(std::get<SglangFigures>(r.figures).rest_memory < 0);
}

TEST_CASE("LightLLM at mem_fraction 0.99 passes its sizing but the check prefill runs out of memory") {
  LightllmConfig c;
  c.mem_fraction = 0.99;
  // With graphs, the fp32 logits each decode graph keeps (§1.5) already fail the capture.
  StartupResult graphs = lightllm_startup(on("h100-sxm-80gb"), c);
  REQUIRE_FALSE(graphs.ok);
  CHECK(graphs.stage == StartupStage::cuda_graph_capture);
  c.disable_cudagraph = true;
  StartupResult r = lightllm_startup(on("h100-sxm-80gb"), c);
  REQUIRE_FALSE(r.ok);
  CHECK(r.stage == StartupStage::max_len_check);
  CHECK(r.failure ==
        "check max len infer fail, you can try:1.Set the --mem_fraction or --max_total_token_num startup parameter "
        "to a smaller value.2.Set the --max_req_total_len to a smaller value.3.Set the --batch_max_tokens startup "
        "parameter to a smaller value.");
  REQUIRE(r.oom);
  CHECK(r.oom->message().rfind("CUDA out of memory. Tried to allocate", 0) == 0);
  // Without the check the same configuration starts.
  c.disable_check_max_len_infer = true;
  CHECK(lightllm_startup(on("h100-sxm-80gb"), c).ok);
}

TEST_CASE("LightLLM checks its pool against batch_max_tokens and max_req_total_len") {
  LightllmConfig small;
  small.max_total_token_num = 8000;
  StartupResult r = lightllm_startup(on("h100-sxm-80gb"), small);
  REQUIRE_FALSE(r.ok);
  CHECK(r.failure == "max_total_token_num must be greater than batch_max_tokens");
  small.max_total_token_num = 10000;
  StartupResult r2 = lightllm_startup(on("h100-sxm-80gb"), small);
  REQUIRE_FALSE(r2.ok);
  CHECK(r2.failure == "max_total_token_num must be >= max_seq_length, got max_total_token_num=10000, "
                      "max_seq_length=16392. Try set --max_req_total_len a smaller value < 10000.");
}

TEST_CASE("a model larger than the GPU fails while loading weights with PyTorch's message") {
  StartupResult r = sglang_startup(on("h100-sxm-80gb", "Llama-3.1-70B"), SglangConfig{});
  REQUIRE_FALSE(r.ok);
  CHECK(r.stage == StartupStage::load_weights);
  REQUIRE(r.oom);
  CHECK(r.failure == r.oom->message());
  CHECK(r.failure.rfind("CUDA out of memory. Tried to allocate ", 0) == 0);
  CHECK(r.memory.weights.size() > 100);
}

TEST_CASE("the serving state continues from start-up: a decode step reuses the workspace and the cached blocks") {
  StartupResult r = sglang_startup(on("h100-sxm-80gb"), SglangConfig{});
  REQUIRE(r.ok);
  alloc::CachingAllocator& a = *r.memory.allocator;
  Bytes reserved = a.reserved_bytes();
  model::AllocationProgram decode = model::forward_program(model::catalogue_model("Llama-3.1-8B"),
                                                          model::ForwardShape{64, 64, 64, 1}, r.forward);
  model::ProgramRun run = model::run_program(a, decode, *r.memory.slots);
  CHECK(run.completed);
  CHECK(run.persistent_reused == 1);  // FlashInfer's workspace, held since start-up
  CHECK(a.reserved_bytes() == reserved);  // served from blocks the graph warm-ups left cached
  a.check_invariants();
}

TEST_CASE("start-up is deterministic and start_engine dispatches by engine") {
  Deployment d = on("a100-80gb");
  StartupResult a = start_engine(d, EngineConfig{VllmConfig{}});
  StartupResult b = start_engine(d, EngineConfig{VllmConfig{}});
  REQUIRE(a.ok);
  CHECK(a.engine == model::Engine::vllm);
  CHECK(a.kv_blocks == b.kv_blocks);
  CHECK(a.bytes.reserved == b.bytes.reserved);
  CHECK(a.bytes.graph_pool == b.bytes.graph_pool);
  // A100: the small-GPU batch defaults (§1.3).
  CHECK(*std::get<VllmConfig>(a.config).max_num_batched_tokens == 2048);
  CHECK(start_engine(d, EngineConfig{LightllmConfig{}}).engine == model::Engine::lightllm);
}

TEST_CASE("vLLM starts DeepSeek-V3 at TP8 on an H200 with FlashMLA pages of 64 tokens x 1,152 B") {
  StartupResult r = vllm_startup(on("h200-141gb", "DeepSeek-V3", 8), VllmConfig{});
  const auto& f = std::get<VllmFigures>(r.figures);
  CHECK(f.page_size == 64 * 1152);
  REQUIRE(r.ok);
  CHECK(r.kv_block_tokens == 64);
  CHECK(r.memory.kv_cache.size() == 61);
  CHECK(r.kv_tokens == r.kv_blocks * 64);
  CHECK(r.kv_tokens > 0);
}

TEST_CASE("vLLM's MLA chunked-prefill workspace: rows max(min(max(8 x len, 4 x seqs x block), 64 Ki), seqs x block)") {
  const model::ModelConfig v3 = model::catalogue_model("DeepSeek-V3");  // kv_lora_rank 512 + rope 64 = 576, bf16
  // 8 × 163,840 is capped at 65,536 rows: 65,536 × 576 × 2 B = 72 MiB.
  CHECK(vllm_mla_chunked_prefill_workspace_bytes(v3, 163840, 256, 64) == 72 * MiB);
  // A short context: 8 × 2048 = 16,384 rows above 4 × 32 × 64 = 8,192: 18 MiB.
  CHECK(vllm_mla_chunked_prefill_workspace_bytes(v3, 2048, 32, 64) == 18 * MiB);
  // At least one page per sequence: 2048 × 64 = 131,072 rows beat the cap: 144 MiB.
  CHECK(vllm_mla_chunked_prefill_workspace_bytes(v3, 163840, 2048, 64) == 144 * MiB);
  CHECK(vllm_mla_chunked_prefill_workspace_bytes(model::catalogue_model("Llama-3.1-8B"), 131072, 256, 16) == 0);
}

TEST_CASE("vLLM allocates the MLA chunked-prefill workspace after the profile run, before the KV tensors") {
  const Deployment d = on("h200-141gb", "DeepSeek-V3", 8);
  VllmConfig c;
  c.max_num_seqs = 256;
  StartupResult r = vllm_startup(d, c);
  REQUIRE(r.ok);
  REQUIRE(r.memory.engine_buffers.size() == 1);
  CHECK(r.memory.engine_buffers[0]->size == 72 * MiB);
  CHECK(r.bytes.workspaces == 72 * MiB);  // FlashMLA has no FlashInfer workspace
  // Out of the margin, not the KV budget: available KV is requested − weights − profile peak − non-torch.
  const auto& f = std::get<VllmFigures>(r.figures);
  CHECK(f.available_kv == static_cast<std::int64_t>(f.requested) -
                              static_cast<std::int64_t>(f.model_memory_usage + f.torch_peak_increase + f.non_torch_increase));
}

TEST_CASE("vLLM ROCM_AITER_MLA holds its decode buffers under full graphs: 640 MiB of page indices for DeepSeek-V3") {
  CHECK(vllm_aiter_mla_buffers(1024, 163840) ==
        std::vector<Bytes>{1025 * 4, 1024ull * 163840 * 4, 1024 * 4, 1025 * 4, 1025 * 4});
  const Deployment d = on("mi300x", "DeepSeek-V3", 8);  // 128 heads / 8 = 16 per rank
  VllmConfig c;
  c.attention_backend = VllmAttentionBackend::rocm_aiter_mla;
  StartupResult r = vllm_startup(d, c);
  REQUIRE(r.ok);
  CHECK(*std::get<VllmConfig>(r.config).max_num_seqs == 1024);
  // 72 MiB chunked-prefill workspace, then 4,100 B (512-rounded: 4,608), 640 MiB, 4,096 B, 4,608, 4,608.
  REQUIRE(r.memory.engine_buffers.size() == 6);
  CHECK(r.memory.engine_buffers[0]->size == 72 * MiB);
  CHECK(r.memory.engine_buffers[2]->size == 640 * MiB);
  CHECK(r.bytes.workspaces == 712 * MiB + 3 * 4608 + 4096);
  // Eager (no full graphs): only the chunked-prefill workspace.
  c.cudagraph_mode = CudaGraphMode::piecewise;
  StartupResult p = vllm_startup(d, c);
  REQUIRE(p.ok);
  CHECK(p.bytes.workspaces == 72 * MiB);
  // 128 heads at TP4 are 32 per rank: AiterMLAImpl refuses them.
  VllmConfig bad;
  bad.attention_backend = VllmAttentionBackend::rocm_aiter_mla;
  CHECK_THROWS_WITH(vllm_startup(on("mi300x", "DeepSeek-V3", 4), bad),
                    "vllm attention_backend: ROCM_AITER_MLA supports 16 or 128 query heads per rank, and model "
                    "'DeepSeek-V3' at tp 4 has 32");
}

TEST_CASE("vLLM 0.6 (V0) counts the CUDA context and other processes as non-torch memory, current counts growth") {
  Deployment d = on("h100-sxm-80gb");
  d.other_processes = 2 * GiB;
  VllmConfig v1;
  VllmConfig v0;
  v0.version = VllmVersion::v0_6;
  StartupResult a = vllm_startup(d, v1);
  StartupResult b = vllm_startup(d, v0);
  REQUIRE(a.ok);
  REQUIRE(b.ok);
  const auto& f1 = std::get<VllmFigures>(a.figures);
  const auto& f0 = std::get<VllmFigures>(b.figures);
  CHECK(f0.torch_peak_increase == f1.torch_peak_increase);
  // V0: used − torch allocated after empty_cache = the 300 MiB context + 2 GiB of the other process
  // + what V1 sees grow (cuBLAS, 64 MiB) + the unallocated tails of segments empty_cache cannot
  // release (the weights', under one 2 MiB page); V1 counts only the growth since its baseline.
  CHECK(f1.non_torch_increase == 64 * MiB);
  const Bytes tails = f0.non_torch_increase - (300 * MiB + 2 * GiB + 64 * MiB);
  CHECK(tails < 2 * MiB);
  CHECK(f1.available_kv - f0.available_kv == static_cast<std::int64_t>(300 * MiB + 2 * GiB + tails));
  // Both: blocks = available // (16 tokens × 128 KiB).
  CHECK(b.kv_blocks == f0.available_kv / static_cast<std::int64_t>(16 * 128 * KiB));
  CHECK(a.kv_blocks > b.kv_blocks);
  // V0 has no dummy sampler run after capture, and the written scenario names its version.
  CHECK(std::get<VllmConfig>(b.config).version == VllmVersion::v0_6);
}

TEST_CASE("vLLM 0.6 starts where current refuses: V0's init_device has no free-memory check") {
  Deployment d = on("h100-sxm-80gb");
  d.other_processes = 10 * GiB;  // free < 0.9 × total
  StartupResult current = vllm_startup(d, VllmConfig{});
  CHECK_FALSE(current.ok);
  CHECK(current.stage == StartupStage::memory_check);
  VllmConfig v0;
  v0.version = VllmVersion::v0_6;
  StartupResult old = vllm_startup(d, v0);
  REQUIRE(old.ok);
  const auto& f = std::get<VllmFigures>(old.figures);
  CHECK(f.non_torch_increase >= 300 * MiB + 10 * GiB + 64 * MiB);
  CHECK(f.non_torch_increase < 300 * MiB + 10 * GiB + 66 * MiB);
  // Too little left: V0's own message, with max_seq_len = block_size × num_gpu_blocks.
  v0.gpu_memory_utilization = 0.4;
  StartupResult small = vllm_startup(d, v0);
  REQUIRE_FALSE(small.ok);
  CHECK(small.stage == StartupStage::kv_cache_sizing);
  CHECK(small.failure.find("The model's max seq len (131072) is larger than the maximum number of tokens that can "
                           "be stored in KV cache (") == 0);
}

TEST_CASE("vLLM versions: parsed by name, an unknown one lists the modelled ones, MLA only for current") {
  CHECK(parse_vllm_version("0.6", "v") == VllmVersion::v0_6);
  CHECK(parse_vllm_version("current", "v") == VllmVersion::current);
  CHECK(VllmConfig{}.version == VllmVersion::current);
  CHECK_THROWS_WITH(parse_vllm_version("0.7", "x.yaml:3:12: key 'engine.version'"),
                    "x.yaml:3:12: key 'engine.version': expected a modelled vLLM version, one of 0.6, 0.8, 0.10, "
                    "current, got '0.7'");
  VllmConfig v0;
  v0.version = VllmVersion::v0_6;
  CHECK_THROWS_WITH(vllm_startup(on("h200-141gb", "DeepSeek-V3", 8), v0),
                    "vllm version 0.6: model 'DeepSeek-V3' uses MLA, which this simulator models only for vLLM current");
}

TEST_CASE("LightLLM 3.0.0 holds one size × 2·Hkv × D tensor per layer, current one L × (size + 1) × 2·Hkv × D tensor") {
  const Deployment d = on("h100-sxm-80gb");  // Llama-3.1-8B: 32 layers × 2 × 8 × 128 × 2 B = 4 KiB a token a layer
  LightllmConfig old_config;
  old_config.version = LightllmVersion::v3_0_0;
  StartupResult now = lightllm_startup(d, LightllmConfig{});
  StartupResult old = lightllm_startup(d, old_config);
  REQUIRE(now.ok);
  REQUIRE(old.ok);
  CHECK(old.kv_tokens == now.kv_tokens);  // the same profile_size arithmetic
  const auto t = static_cast<Bytes>(old.kv_tokens);
  REQUIRE(now.memory.kv_cache.size() == 1);
  CHECK(now.memory.kv_cache[0]->size >= (t + 1) * 128 * KiB);
  CHECK(now.memory.kv_cache[0]->size < (t + 1) * 128 * KiB + 2 * MiB);
  REQUIRE(old.memory.kv_cache.size() == 32);
  for (const alloc::Block* b : old.memory.kv_cache) {
    CHECK(b->size >= t * 4 * KiB);
    CHECK(b->size < t * 4 * KiB + 2 * MiB);
  }
  // mem_state int32 [size] and indexes int64 [size] before the tensors.
  REQUIRE(old.memory.engine_buffers.size() == 2);
  CHECK(old.memory.engine_buffers[0]->size >= t * 4);
  CHECK(old.memory.engine_buffers[1]->size >= t * 8);
  CHECK(now.memory.engine_buffers.empty());
}

TEST_CASE("LightLLM 3.0.0's failing KV allocation is one layer's, 32x smaller than current's single tensor") {
  const Deployment d = on("h100-sxm-80gb");
  LightllmConfig c;
  c.max_total_token_num = 600000;  // 600,001 × 128 KiB = 73.2 GiB does not fit after 15 GiB of weights
  StartupResult now = lightllm_startup(d, c);
  c.version = LightllmVersion::v3_0_0;
  StartupResult old = lightllm_startup(d, c);
  REQUIRE_FALSE(now.ok);
  REQUIRE_FALSE(old.ok);
  CHECK(now.stage == StartupStage::kv_cache_allocation);
  CHECK(old.stage == StartupStage::kv_cache_allocation);
  REQUIRE(now.oom.has_value());
  REQUIRE(old.oom.has_value());
  CHECK(now.oom->requested == 600001ull * 128 * KiB);
  CHECK(old.oom->requested == 600000ull * 4 * KiB);  // 2.29 GiB, layer by layer
}

TEST_CASE("LightLLM versions: parsed by name, an unknown one lists the modelled ones, MLA only for current") {
  CHECK(parse_lightllm_version("3.0.0", "v") == LightllmVersion::v3_0_0);
  CHECK(LightllmConfig{}.version == LightllmVersion::current);
  CHECK_THROWS_WITH(parse_lightllm_version("1.1.0", "x.yaml:4:12: key 'engine.version'"),
                    "x.yaml:4:12: key 'engine.version': expected a modelled LightLLM version, one of 2.0.0, 3.0.0, current, "
                    "got '1.1.0'");
  LightllmConfig c;
  c.version = LightllmVersion::v3_0_0;
  CHECK_THROWS_WITH(lightllm_startup(on("h200-141gb", "DeepSeek-V3", 8), c),
                    "lightllm version 3.0.0: model 'DeepSeek-V3' uses MLA, which this simulator models only for "
                    "LightLLM current");
}

TEST_CASE("the rotary cache at start-up: vLLM counts it as loaded, SGLang's is float32, LightLLM's follows the pool (§10)") {
  // vLLM: Llama-3.1-8B's cos_sin_cache [131072, 128] bf16, built after layer 0's o_proj, in
  // model_memory_usage beside the weights.
  StartupResult v = vllm_startup(on("h100-sxm-80gb"), VllmConfig{});
  REQUIRE(v.ok);
  CHECK(v.bytes.rotary_cache == 33'554'432);
  REQUIRE(v.memory.rotary_cache.size() == 1);
  CHECK(v.bytes.weights == 16'060'522'496);
  CHECK(std::get<VllmFigures>(v.figures).model_memory_usage == v.bytes.weights + v.bytes.rotary_cache);
  // SGLang keeps it in float32 on CUDA: 64 MiB, gone from the free memory its pool is sized from.
  StartupResult s = sglang_startup(on("h100-sxm-80gb"), SglangConfig{});
  REQUIRE(s.ok);
  CHECK(s.bytes.rotary_cache == 67'108'864);
  const auto& sf = std::get<SglangFigures>(s.figures);
  CHECK(sf.total_gpu_memory - sf.available_gpu_memory >= s.bytes.weights + s.bytes.rotary_cache);
  // LightLLM current: _init_custom after the pool and request manager: llama3 rope, two
  // [max(131072, 16392), 64] bf16 tables; the pool's tokens come from the free memory before them.
  StartupResult l = lightllm_startup(on("h100-sxm-80gb"), LightllmConfig{});
  REQUIRE(l.ok);
  CHECK(l.bytes.rotary_cache == 2 * Bytes{131072} * 64 * 2);
  REQUIRE(l.memory.rotary_cache.size() == 2);
  const auto& lf = std::get<LightllmFigures>(l.figures);
  CHECK(l.kv_tokens == lightllm_kv_tokens(lf.free_after_weights, l.memory.device->total(), 0.9, lf.cell));
}

TEST_CASE("LightLLM's rotary rows by version, model class and rope_scaling (§10)") {
  const model::ModelConfig llama = model::catalogue_model("Llama-3.1-8B");
  // 2.0.0 (llama/model.py @ 8b8a4e13c): factor 8 applied to every type, + 64 Ki rows.
  auto old = lightllm_rotary_tables(llama, LightllmVersion::v2_0_0, 16392);
  REQUIRE(old.size() == 2);
  CHECK(old[0].name == "_cos_cached");
  CHECK(old[1].name == "_sin_cached");
  CHECK(old[0].positions == 131072 * 8 + 65536);
  CHECK(old[0].bytes() + old[1].bytes() == 272 * MiB);
  // 3.0.0 and current: llama3 → max(max_position, max_seq_length).
  CHECK(lightllm_rotary_tables(llama, LightllmVersion::v3_0_0, 16392)[0].positions == 131072);
  CHECK(lightllm_rotary_tables(llama, LightllmVersion::current, 200008)[0].positions == 200008);
  // No rope_scaling: max(max_position + 128 Ki, max_seq_length): Qwen2.5-7B-Instruct 163,840 rows, 40 MiB.
  const model::ModelConfig qwen = model::catalogue_model("Qwen2.5-7B-Instruct");
  auto q = lightllm_rotary_tables(qwen, LightllmVersion::current, 16392);
  CHECK(q[0].positions == 163840);
  CHECK(q[0].bytes() + q[1].bytes() == 40 * MiB);
  // mistral/model.py: max_position × factor + 64 Ki: 98,304 rows of 64.
  CHECK(lightllm_rotary_tables(model::catalogue_model("Mistral-7B-v0.3"), LightllmVersion::current, 16392)[0].positions ==
        98304);
  // deepseek2/model.py (current): max_position_embeddings rows of qk_rope_head_dim / 2: 2 × 10 MiB.
  auto ds = lightllm_rotary_tables(model::catalogue_model("DeepSeek-V2-Lite"), LightllmVersion::current, 16392);
  CHECK(ds[0].positions == 163840);
  CHECK(ds[0].width == 32);
  CHECK(ds[0].bytes() == 10 * MiB);
  // yarn on a llama-class model (Qwen2.5's factor 4 over 32,768): current cat(freqs, freqs) over
  // max(max_position, max_seq_length), head_dim wide; 3.0.0 the default rule with the factor.
  model::ModelConfig yarn = qwen;
  yarn.rope_scaling = model::RopeScaling::yarn;
  yarn.rope_factor = 4;
  yarn.rope_original_max_position = 32768;
  auto y = lightllm_rotary_tables(yarn, LightllmVersion::current, 16392);
  CHECK(y[0].positions == 32768);
  CHECK(y[0].width == 128);
  CHECK(lightllm_rotary_tables(yarn, LightllmVersion::v3_0_0, 16392)[0].positions == 32768 * 4 + 131072);
  // current refuses linear (llama/model.py _init_custom: "Unknown RoPE scaling type").
  model::ModelConfig linear = qwen;
  linear.rope_scaling = model::RopeScaling::linear;
  linear.rope_factor = 2;
  CHECK_THROWS_WITH(lightllm_rotary_tables(linear, LightllmVersion::current, 16392),
                    Catch::Contains("rope_scaling type linear, which LightLLM's llama/model.py _init_custom refuses"));
  CHECK(lightllm_rotary_tables(linear, LightllmVersion::v3_0_0, 16392)[0].positions == 65536 + 131072);
}
