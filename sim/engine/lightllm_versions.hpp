#pragma once
// The LightLLM release lines whose KV layout this simulator models (docs/serving-memory-model.md §3.1),
// each a row of one table.
#include <cstdint>
#include <span>
#include <string_view>

namespace headroom::engine {

enum class LightllmVersion { v2_0_0, v3_0_0, current };

// How MemoryManager._init_buffers lays the KV cache out.
enum class LightllmKvLayout {
  k_then_v_per_layer,  // a list of L [size, Hkv, D] K tensors, then L V tensors (before PR #320)
  kv_per_layer,        // one [size, 2·Hkv, D] tensor per layer (PR #320 to #607)
  single_tensor,       // one [L, size + 1, 2·Hkv, D] tensor (PR #607 on)
};

struct LightllmVersionRules {
  LightllmVersion version;
  std::string_view name;     // engine.version
  std::string_view sources;  // where the rules below come from: file@tag
  LightllmKvLayout kv_layout;
  // --max_total_token_num's default when the release had no memory profile (2.0.0: 6000); 0: the
  // mem_fraction profile sizes the cache when the flag is absent.
  std::int64_t fixed_max_total_token_num;
  bool check_mem_size;       // _check_mem_size
  bool cuda_graphs;          // _init_cudagraph
  bool check_max_len_infer;  // _check_max_len_infer
  bool models_mla;           // MLA models' manager as current has it
};

// Oldest first; the last row is the default.
std::span<const LightllmVersionRules> lightllm_versions();
const LightllmVersionRules& lightllm_version_rules(LightllmVersion version);
std::string_view lightllm_version_name(LightllmVersion version);  // "2.0.0", "3.0.0", "current"
LightllmVersion parse_lightllm_version(std::string_view text, std::string_view what);

}  // namespace headroom::engine
