#pragma once
// The vLLM release lines whose start-up this simulator models (docs/serving-memory-model.md §1.7),
// each a row of one table: its accounting, checks and defaults as that release's source has them.
#include <span>
#include <string_view>

namespace headroom::engine {

enum class VllmVersion { v0_6, v0_8, v0_10, current };

// CompilationConfig.cudagraph_mode (§1.5).
enum class CudaGraphMode { none, piecewise, full, full_decode_only, full_and_piecewise };

// How determine_available_memory charges what is not the KV cache (§1.1, §1.7).
enum class VllmNonKvAccounting {
  // torch's allocated peak (weights included) + every byte used on the device but not allocated by
  // torch after empty_cache (the CUDA context and other processes included): V0's worker.py, V1's
  // gpu_worker.py up to 0.8.
  peak_plus_all_non_torch,
  // memory_profiling: weights + torch's peak increase + the growth of (used − torch reserved) since
  // the init_device snapshot.
  growth_since_snapshot,
};

// EngineArgs' default max_num_batched_tokens / max_num_seqs (§1.3).
enum class VllmBatchDefaultsRule {
  h100_h200_by_name,       // "h100" or "h200" in the device name: 8192 / 16384 tokens, 1024 sequences
  device_memory_not_a100,  // ≥ 70 GiB and not an A100 (PR #17885)
};

// The default cudagraph_capture_sizes (§1.5).
enum class VllmCaptureSizesRule {
  step8_to_512,                 // [1, 2, 4] + range(8, 513, 8)
  step8_to_twice_max_num_seqs,  // [1, 2, 4] + range(8, min(2 × max_num_seqs, 512) + 1, 8)
  step16_above_256,             // §1.5's list with speculative tokens
};

struct VllmVersionRules {
  VllmVersion version;
  std::string_view name;     // engine.version
  std::string_view sources;  // where the rules below come from: file@tag
  VllmNonKvAccounting accounting;
  bool snapshot_after_distributed;  // init_device sets up NCCL before its memory snapshot
  bool free_memory_check;           // init_device refuses when free < total × gpu_memory_utilization
  bool v1_kv_cache_check;           // V1's one-request check; else V0's raise_if_cache_size_invalid
  bool sampler_warmup_after_capture;
  VllmBatchDefaultsRule batch_defaults;
  VllmCaptureSizesRule capture_sizes;
  CudaGraphMode default_cudagraph_mode;
  int full_graph_flash_attn_splits;  // FA3's num_splits bound in FULL graphs (0: not applied)
  bool models_mla_and_sliding_window;  // MLA backends and the hybrid KV-cache manager as current has them
};

// Oldest first; the last row is the default.
std::span<const VllmVersionRules> vllm_versions();
const VllmVersionRules& vllm_version_rules(VllmVersion version);
std::string_view vllm_version_name(VllmVersion version);  // "0.6", ..., "current"
VllmVersion parse_vllm_version(std::string_view text, std::string_view what);

}  // namespace headroom::engine
