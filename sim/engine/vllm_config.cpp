#include "sim/engine/vllm_config.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/enum_names.hpp"
#include "sim/core/error.hpp"
#include "sim/engine/knob_checks.hpp"
#include "sim/model/attention_layers.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::engine {

using namespace knob_checks;

namespace {

constexpr std::array<EnumName<UsageContext>, 4> kUsageContextNames{{
    {UsageContext::api_server, "api_server"},
    {UsageContext::api_server, "api-server", Spelling::alias},
    {UsageContext::llm_class, "llm_class"},
    {UsageContext::llm_class, "llm-class", Spelling::alias},
}};

// vllm/config/compilation.py CUDAGraphMode's member names; read in any case.
constexpr std::array<EnumName<CudaGraphMode>, 5> kCudaGraphModeNames{{
    {CudaGraphMode::none, "NONE"},
    {CudaGraphMode::piecewise, "PIECEWISE"},
    {CudaGraphMode::full, "FULL"},
    {CudaGraphMode::full_decode_only, "FULL_DECODE_ONLY"},
    {CudaGraphMode::full_and_piecewise, "FULL_AND_PIECEWISE"},
}};

// vLLM's _Backend names (VLLM_ATTENTION_BACKEND); read in any case.
constexpr std::array<EnumName<VllmAttentionBackend>, 6> kVllmAttentionBackendNames{{
    {VllmAttentionBackend::flash_attn, "FLASH_ATTN"},
    {VllmAttentionBackend::flashinfer, "FLASHINFER"},
    {VllmAttentionBackend::flashmla, "FLASHMLA"},
    {VllmAttentionBackend::cutlass_mla, "CUTLASS_MLA"},
    {VllmAttentionBackend::triton_mla, "TRITON_MLA"},
    {VllmAttentionBackend::rocm_aiter_mla, "ROCM_AITER_MLA"},
}};

}  // namespace

std::string_view usage_context_name(UsageContext usage) { return enum_name(kUsageContextNames, usage); }

UsageContext parse_usage_context(std::string_view text, std::string_view what) {
  return parse_enum(kUsageContextNames, text, what);
}

std::string_view cudagraph_mode_name(CudaGraphMode mode) { return enum_name(kCudaGraphModeNames, mode); }

CudaGraphMode parse_cudagraph_mode(std::string_view text, std::string_view what) {
  return parse_enum(kCudaGraphModeNames, text, what, NameCase::any);
}

std::string_view vllm_attention_backend_name(VllmAttentionBackend backend) {
  return enum_name(kVllmAttentionBackendNames, backend);
}

VllmAttentionBackend parse_vllm_attention_backend(std::string_view text, std::string_view what) {
  return parse_enum(kVllmAttentionBackendNames, text, what, NameCase::any);
}

bool is_mla_backend(VllmAttentionBackend backend) {
  return backend == VllmAttentionBackend::flashmla || backend == VllmAttentionBackend::cutlass_mla ||
         backend == VllmAttentionBackend::triton_mla || backend == VllmAttentionBackend::rocm_aiter_mla;
}

VllmBatchDefaults vllm_batch_defaults(Bytes device_total, std::string_view device_name, UsageContext usage,
                                      VllmBatchDefaultsRule rule) {
  const std::string name = lower(device_name);
  bool large = false;
  if (rule == VllmBatchDefaultsRule::h100_h200_by_name) {
    // vllm/engine/arg_utils.py @ v0.8.x _set_default_args_v1: "h100" or "h200" in the device name.
    large = name.find("h100") != std::string::npos || name.find("h200") != std::string::npos;
  } else {
    // vllm/engine/arg_utils.py get_batch_defaults: device_memory >= 70 GiB and "a100" not in the
    // device name (§1.3, PR #17885).
    large = device_total >= 70 * GiB && name.find("a100") == std::string::npos;
  }
  if (usage == UsageContext::llm_class) return large ? VllmBatchDefaults{16384, 1024} : VllmBatchDefaults{8192, 256};
  return large ? VllmBatchDefaults{8192, 1024} : VllmBatchDefaults{2048, 256};
}

std::vector<int> vllm_cudagraph_capture_sizes(std::int64_t max_num_seqs, std::int64_t max_num_batched_tokens,
                                              int num_speculative_tokens, VllmCaptureSizesRule rule) {
  if (rule != VllmCaptureSizesRule::step16_above_256) {
    // vllm/config.py @ v0.8.x: up to 512; the config module @ v0.10.x: up to cuda_graph_sizes =
    // min(max_num_seqs × 2, 512); step 8, both capped by max_num_batched_tokens (§1.7).
    std::int64_t top = rule == VllmCaptureSizesRule::step8_to_512 ? 512 : std::min<std::int64_t>(max_num_seqs * 2, 512);
    std::vector<int> sizes;
    for (int s : {1, 2, 4})
      if (s <= max_num_batched_tokens) sizes.push_back(s);
    for (int s = 8; s <= top && s <= max_num_batched_tokens; s += 8) sizes.push_back(s);
    return sizes;
  }
  // vllm/config/vllm.py (§1.5): the largest size is min(max_num_seqs × 2 × (1 + spec), 512),
  // capped by max_num_batched_tokens.
  std::int64_t largest = std::min<std::int64_t>(max_num_seqs * 2 * (1 + num_speculative_tokens), 512);
  largest = std::min(largest, max_num_batched_tokens);
  std::vector<int> sizes;
  for (int s : {1, 2, 4})
    if (s <= largest) sizes.push_back(s);
  for (int s = 8; s < 256 && s <= largest; s += 8) sizes.push_back(s);
  for (int s = 256; s <= largest; s += 16) sizes.push_back(s);
  return sizes;
}

std::optional<int> vllm_forced_block_size(VllmAttentionBackend backend) {
  // §1.2: FlashMLA pages of 64 tokens, CUTLASS MLA of 128.
  if (backend == VllmAttentionBackend::flashmla) return 64;
  if (backend == VllmAttentionBackend::cutlass_mla) return 128;
  return std::nullopt;
}

std::vector<FilledDefault> resolve(VllmConfig& c, const Deployment& d) {
  validate_deployment(d);
  std::vector<FilledDefault> filled;
  require_fraction("vllm", "gpu_memory_utilization", c.gpu_memory_utilization);

  if (!c.attention_backend) {
    c.attention_backend = d.model.is_mla() ? VllmAttentionBackend::flashmla : VllmAttentionBackend::flash_attn;
    filled.push_back({"attention_backend", std::string(vllm_attention_backend_name(*c.attention_backend)),
                      d.model.is_mla() ? "vLLM's MLA backend on Hopper" : "vLLM's default on CUDA"});
  }
  if (c.mla_decode_out != model::DecodeOutBuffer::transient && !d.model.is_mla())
    throw EngineConfigError("mla_decode_out", fmt::format("vllm mla_decode_out: '{}' applies to MLA models only, and model '{}' is not one",
                                 model::decode_out_buffer_name(c.mla_decode_out), d.model.name));
  // FlashInferExperts (fused_moe/flashinfer_cutlass_moe.py, vllm commit 01f004eb) runs MoE layers
  // on compute capability 9.0 and 10.x only.
  if (c.moe_backend == model::MoeBackend::flashinfer_cutlass) {
    if (!d.model.is_moe())
      throw EngineConfigError("moe_backend", fmt::format("vllm moe_backend: 'flashinfer_cutlass' applies to MoE models "
                                                         "only, and model '{}' is not one",
                                                         d.model.name));
    using Q = model::WeightQuantization::Method;
    const Q q = d.model.quantization.method;
    if (q != Q::none && q != Q::fp8_tensor)
      throw EngineConfigError("moe_backend", fmt::format("vllm moe_backend: 'flashinfer_cutlass' is modelled for "
                                                         "unquantized and fp8 per-tensor experts, and model '{}' is {}",
                                                         d.model.name, model::quantization_name(q)));
    const int major = d.gpu.compute_capability_major();
    if (major != 0 && d.gpu.compute_capability != "9.0" && major != 10)
      throw EngineConfigError("moe_backend", fmt::format("vllm moe_backend: 'flashinfer_cutlass' runs on compute "
                                                         "capability 9.0 or 10.x, and GPU '{}' is {}",
                                                         d.gpu.name, d.gpu.compute_capability));
  }
  // MLA backends are modelled as vLLM current has them; earlier lines are modelled for MHA/GQA only.
  const VllmVersionRules& version = vllm_version_rules(c.version);
  if (!version.models_mla_and_sliding_window && d.model.is_mla())
    throw EngineConfigError("version", fmt::format("vllm version {}: model '{}' uses MLA, which this simulator "
                                                   "models only for vLLM current",
                                                   version.name, d.model.name));
  // V0's block manager and the V1 of earlier lines sized sliding-window layers their own way (not
  // modelled); current's hybrid KV-cache manager is (vllm_kv_cache_groups.hpp).
  if (!version.models_mla_and_sliding_window && model::has_sliding_window(d.model))
    throw EngineConfigError("version", fmt::format("vllm version {}: model '{}' has sliding-window layers, which this "
                                                   "simulator models only for vLLM current (the hybrid KV-cache manager)",
                                                   version.name, d.model.name));
  // Chunked local attention (Llama 4) as a KV cache group of its own is current's
  // (ChunkedLocalAttentionManager, vllm/v1/core/single_type_kv_cache_manager.py); within the 0.10
  // line it is on in 0.10.0 and off from 0.10.1 (PR #21761,
  // VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE "0"), so the earlier lines are not modelled.
  if (!version.models_mla_and_sliding_window && model::has_chunked_attention(d.model))
    throw EngineConfigError("version", fmt::format("vllm version {}: model '{}' has chunked local attention layers, "
                                                   "which this simulator models only for vLLM current",
                                                   version.name, d.model.name));
  // vllm/config/vllm.py: chunked local attention with an EAGLE drafter turns the hybrid manager
  // off, other drafters keep it; the drafter is not modelled here, so neither is the choice.
  if (model::has_chunked_attention(d.model) && c.num_speculative_tokens > 0 && !c.disable_hybrid_kv_cache_manager)
    throw EngineConfigError("num_speculative_tokens",
                            fmt::format("vllm num_speculative_tokens: model '{}' has chunked local attention layers, "
                                        "whose KV cache groups vLLM keeps or drops by the drafter (off with EAGLE), "
                                        "which is not modelled; set disable_hybrid_kv_cache_manager: true for EAGLE",
                                        d.model.name));
  if (is_mla_backend(*c.attention_backend) != d.model.is_mla())
    throw EngineConfigError("attention_backend", fmt::format("vllm attention_backend: {} is {} backend, but model '{}' {}",
                                 vllm_attention_backend_name(*c.attention_backend),
                                 is_mla_backend(*c.attention_backend) ? "an MLA" : "a multi-head attention",
                                 d.model.name, d.model.is_mla() ? "uses MLA" : "has no MLA"));

  // vllm/v1/attention/backends/mla/rocm_aiter_mla.py AiterMLAImpl (commit 0038cd3c8): 16 or 128 heads.
  if (*c.attention_backend == VllmAttentionBackend::rocm_aiter_mla && d.model.heads / d.tp != 16 &&
      d.model.heads / d.tp != 128)
    throw EngineConfigError("attention_backend",
                            fmt::format("vllm attention_backend: ROCM_AITER_MLA supports 16 or 128 query heads per "
                                        "rank, and model '{}' at tp {} has {}",
                                        d.model.name, d.tp, d.model.heads / d.tp));

  std::optional<int> forced = vllm_forced_block_size(*c.attention_backend);
  if (c.block_size) require_at_least("vllm", "block_size", *c.block_size, 1);
  if (forced && c.block_size != forced) {
    c.block_size = forced;
    filled.push_back({"block_size", std::to_string(*forced),
                      fmt::format("forced by {} (§1.2)", vllm_attention_backend_name(*c.attention_backend))});
  } else if (!c.block_size) {
    c.block_size = 16;
    filled.push_back({"block_size", "16", "vLLM's CUDA default (§1.2)"});
  }

  VllmBatchDefaults batch = vllm_batch_defaults(d.total(), d.gpu.name, c.usage_context, version.batch_defaults);
  std::string batch_why =
      version.batch_defaults == VllmBatchDefaultsRule::h100_h200_by_name
          ? fmt::format("vLLM {} {} default on {} (\"h100\" or \"h200\" in the name: {}) (§1.7)", version.name,
                        usage_context_name(c.usage_context), d.gpu.name, batch.max_num_seqs == 1024 ? "yes" : "no")
          : fmt::format("{} default on {} ({} ≥ 70 GiB and not A100: {}) (§1.3)", usage_context_name(c.usage_context),
                        d.gpu.name, format_bytes(d.total()), batch.max_num_seqs == 1024 ? "yes" : "no");
  if (!c.max_num_batched_tokens) {
    c.max_num_batched_tokens = batch.max_num_batched_tokens;
    filled.push_back({"max_num_batched_tokens", std::to_string(batch.max_num_batched_tokens), batch_why});
  }
  if (!c.max_num_seqs) {
    c.max_num_seqs = batch.max_num_seqs;
    filled.push_back({"max_num_seqs", std::to_string(batch.max_num_seqs), batch_why});
  }
  require_range("vllm", "max_num_seqs", *c.max_num_seqs, 1, limits::kMaxRunningRequests);
  require_range("vllm", "max_num_batched_tokens", *c.max_num_batched_tokens, 1, limits::kMaxBatchTokens);
  if (*c.max_num_batched_tokens < *c.max_num_seqs)
    throw EngineConfigError("max_num_batched_tokens", fmt::format("vllm max_num_batched_tokens: {} must be at least max_num_seqs ({})",
                                 *c.max_num_batched_tokens, *c.max_num_seqs));

  if (!c.max_model_len) {
    c.max_model_len = d.model.max_position;
    filled.push_back({"max_model_len", std::to_string(d.model.max_position), "the model's max_position_embeddings"});
  }
  require_range("vllm", "max_model_len", *c.max_model_len, 1, limits::kMaxContextTokens);
  if (*c.max_model_len > d.model.max_position)
    throw EngineConfigError("max_model_len", fmt::format("vllm max_model_len: {} is above the model's max_position_embeddings ({})",
                                 *c.max_model_len, d.model.max_position));

  require_at_least("vllm", "num_speculative_tokens", c.num_speculative_tokens, 0);
  if (!c.cudagraph_mode && !c.enforce_eager) {
    c.cudagraph_mode = version.default_cudagraph_mode;
    filled.push_back({"cudagraph_mode", std::string(cudagraph_mode_name(*c.cudagraph_mode)),
                      fmt::format("vLLM {}'s default (§1.5, §1.7)", version.name)});
  }
  if (c.enforce_eager && c.cudagraph_mode != CudaGraphMode::none) {
    c.cudagraph_mode = CudaGraphMode::none;
    filled.push_back({"cudagraph_mode", "NONE", "enforce_eager"});
  }
  if (c.cudagraph_capture_sizes) {
    require_sizes("vllm", "cudagraph_capture_sizes", *c.cudagraph_capture_sizes);
    c.cudagraph_capture_sizes = sorted_unique(*c.cudagraph_capture_sizes);
  } else {
    c.cudagraph_capture_sizes = vllm_cudagraph_capture_sizes(*c.max_num_seqs, *c.max_num_batched_tokens,
                                                             c.num_speculative_tokens, version.capture_sizes);
    filled.push_back({"cudagraph_capture_sizes", list(*c.cudagraph_capture_sizes),
                      version.capture_sizes == VllmCaptureSizesRule::step16_above_256
                          ? "[1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16) (§1.5)"
                      : version.capture_sizes == VllmCaptureSizesRule::step8_to_512
                          ? "vLLM 0.8: [1, 2, 4] + range(8, 513, 8) (§1.7)"
                          : "vLLM 0.10: [1, 2, 4] + range(8, min(2 × max_num_seqs, 512) + 1, 8) (§1.7)"});
  }
  if (c.kv_cache_memory_bytes)
    require_at_least("vllm", "kv_cache_memory_bytes", static_cast<std::int64_t>(*c.kv_cache_memory_bytes), 1);
  if (c.num_gpu_blocks_override)
    require_range("vllm", "num_gpu_blocks_override", *c.num_gpu_blocks_override, 1, limits::kMaxKvBlocks);
  // Throws for a dtype the model cannot use.
  const model::KvLayout layout = checked_kv_layout(d, model::Engine::vllm, c.kv_cache_dtype);
  if (c.kv_cache_memory_bytes && !c.num_gpu_blocks_override) {
    const Bytes page = model::vllm_page_size_bytes(layout, *c.block_size);
    const Bytes blocks =
        page == 0 || layout.layers <= 0 ? 0 : *c.kv_cache_memory_bytes / page / static_cast<Bytes>(layout.layers);
    if (blocks > static_cast<Bytes>(limits::kMaxKvBlocks))
      throw EngineConfigError("kv_cache_memory_bytes",
                              fmt::format("vllm kv_cache_memory_bytes: {} gives {} KV blocks of {} tokens, above the "
                                          "limit of {} (docs/limits.md); raise block_size or give less memory",
                                          *c.kv_cache_memory_bytes, blocks, *c.block_size, limits::kMaxKvBlocks));
  }
  return filled;
}

}  // namespace headroom::engine
