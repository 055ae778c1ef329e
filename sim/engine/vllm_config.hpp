#pragma once
// vLLM (v1 engine) start-up knobs under its own names and defaults (docs/serving-memory-model.md §1).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/deployment.hpp"
#include "sim/engine/vllm_versions.hpp"
#include "sim/model/forward_program.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/sampler_program.hpp"

namespace headroom::engine {

enum class UsageContext { api_server, llm_class };  // vllm serve / the LLM class (§1.3)
std::string_view usage_context_name(UsageContext usage);
UsageContext parse_usage_context(std::string_view text, std::string_view what);

std::string_view cudagraph_mode_name(CudaGraphMode mode);  // vLLM's spelling: FULL_AND_PIECEWISE, ...
CudaGraphMode parse_cudagraph_mode(std::string_view text, std::string_view what);

// VLLM_ATTENTION_BACKEND values this simulator models.
enum class VllmAttentionBackend { flash_attn, flashinfer, flashmla, cutlass_mla, triton_mla, rocm_aiter_mla };
std::string_view vllm_attention_backend_name(VllmAttentionBackend backend);  // FLASH_ATTN, ...
VllmAttentionBackend parse_vllm_attention_backend(std::string_view text, std::string_view what);
bool is_mla_backend(VllmAttentionBackend backend);

struct VllmConfig {
  VllmVersion version = VllmVersion::current;        // the release line (vllm_versions.hpp, §1.7)
  double gpu_memory_utilization = 0.9;               // share of the device total (§1.1)
  std::optional<std::int64_t> max_num_seqs;          // default by device (§1.3)
  std::optional<std::int64_t> max_num_batched_tokens;  // default by device (§1.3)
  std::optional<int> block_size;                     // 16; FlashMLA forces 64, CUTLASS MLA 128 (§1.2)
  std::optional<std::int64_t> max_model_len;         // default: the model's max_position_embeddings
  bool enable_prefix_caching = true;                 // on for generative models (§1.3)
  std::optional<std::vector<int>> cudagraph_capture_sizes;  // default: §1.5's list
  std::optional<CudaGraphMode> cudagraph_mode;       // default: the version's (§1.5, §1.7)
  bool enforce_eager = false;                        // no CUDA graphs
  int num_speculative_tokens = 0;
  model::KvCacheDtype kv_cache_dtype = model::KvCacheDtype::model;  // "auto"
  std::optional<VllmAttentionBackend> attention_backend;  // FLASH_ATTN (MHA/GQA) or FLASHMLA (MLA)
  std::optional<Bytes> kv_cache_memory_bytes;        // --kv-cache-memory: skips the accounting (§1.1)
  std::optional<std::int64_t> num_gpu_blocks_override;  // replaces the computed block count (§1.2)
  // --disable-hybrid-kv-cache-manager: sliding-window layers sized as full attention (§1.2b).
  bool disable_hybrid_kv_cache_manager = false;
  model::SamplerKind sampler = model::SamplerKind::native;  // VLLM_USE_FLASHINFER_SAMPLER=1: flashinfer
  UsageContext usage_context = UsageContext::api_server;
  // MLA decode output buffer of FlashInfer-MLA/CUTLASS-MLA (§4c): `transient` (released builds),
  // `per-layer` (the #37442 regression: one zeroed (max_num_seqs, heads, 512) fp32 buffer cached
  // per layer, created lazily in forward_mqa, which profile_run never calls) or `shared`
  // (#37799: one module-level buffer).
  model::DecodeOutBuffer mla_decode_out = model::DecodeOutBuffer::transient;
  // --moe-backend (vllm/config/kernel.py KernelConfig.moe_backend, vLLM's default `auto` picks by
  // quantization and GPU): `triton`, what headroom runs unless told, or `flashinfer_cutlass`,
  // FlashInferExperts with its per-call workspace (§4b).
  model::MoeBackend moe_backend = model::MoeBackend::triton;
};

// EngineArgs.get_batch_defaults (§1.3): (max_num_batched_tokens, max_num_seqs).
struct VllmBatchDefaults {
  std::int64_t max_num_batched_tokens = 0;
  std::int64_t max_num_seqs = 0;
  bool operator==(const VllmBatchDefaults&) const = default;
};
// `device_name` is matched for "a100" (any case), as vLLM does with the CUDA device name; 0.8 matched
// "h100" and "h200" instead (§1.7).
VllmBatchDefaults vllm_batch_defaults(Bytes device_total, std::string_view device_name, UsageContext usage,
                                      VllmBatchDefaultsRule rule = VllmBatchDefaultsRule::device_memory_not_a100);

// §1.5: [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16) with
// max = min(max_num_seqs × 2 × (1 + num_speculative_tokens), 512), capped by max_num_batched_tokens.
// Earlier lines (§1.7): 0.8 [1, 2, 4] + range(8, 513, 8); 0.10 the same up to min(2 × max_num_seqs, 512);
// both capped by max_num_batched_tokens.
std::vector<int> vllm_cudagraph_capture_sizes(std::int64_t max_num_seqs, std::int64_t max_num_batched_tokens,
                                              int num_speculative_tokens = 0,
                                              VllmCaptureSizesRule rule = VllmCaptureSizesRule::step16_above_256);

// Block size an MLA backend forces (§1.2), or nullopt when the backend takes any.
std::optional<int> vllm_forced_block_size(VllmAttentionBackend backend);

std::vector<FilledDefault> resolve(VllmConfig& config, const Deployment& deployment);

}  // namespace headroom::engine
