#include "sim/engine/lightllm_versions.hpp"

#include <array>

#include "sim/engine/engine_version.hpp"

namespace headroom::engine {

namespace {

// One row per modelled release line, oldest first (docs/serving-memory-model.md §3.1).
constexpr std::array<LightllmVersionRules, 3> kLightllmVersions{{
    // setup.py version 2.0.0 (commit 8b8a4e13c, 2023-11-27) up to PR #320 (commit 00aeedc34,
    // 2024-01-25): lightllm/common/mem_manager.py _init_buffers (key_buffer: L [size, Hkv, D], then
    // value_buffer: L more), basemodel.py __init__ (weights, mem manager, req manager; no graphs, no
    // check prefill), api_server.py (--max_total_token_num 6000; batch_max_tokens = max(int(1/6 ×
    // max_total_token_num), max_req_total_len)), req_manager.py (req_state bool and
    // req_to_token_indexs int32 [running_max_req_size + 8, max_req_total_len + 8]).
    {LightllmVersion::v2_0_0, "2.0.0", "lightllm/common/mem_manager.py, basemodel/basemodel.py, server/api_server.py @ 8b8a4e13c (2.0.0)",
     LightllmKvLayout::k_then_v_per_layer, /*fixed_max_total_token_num=*/6000, /*check_mem_size=*/false,
     /*cuda_graphs=*/false, /*check_max_len_infer=*/false, /*models_mla=*/false},
    // lightllm/common/mem_manager.py @ d9e3ba2ec (setup.py version 3.0.0, November 2024):
    // _init_buffers allocates one [size, 2·Hkv, D] tensor per layer, before PR #607.
    {LightllmVersion::v3_0_0, "3.0.0", "lightllm/common/mem_manager.py @ d9e3ba2ec (3.0.0)",
     LightllmKvLayout::kv_per_layer, /*fixed_max_total_token_num=*/0, /*check_mem_size=*/true, /*cuda_graphs=*/true,
     /*check_max_len_infer=*/true, /*models_mla=*/false},
    // lightllm/common/kv_cache_mem_manager/mem_manager.py @ v1.2.0: one [L, size + 1, 2·Hkv, D]
    // tensor (PR #607, commit 06afb4a63, first tagged in v1.0.0).
    {LightllmVersion::current, "current", "lightllm/common/kv_cache_mem_manager/mem_manager.py @ v1.2.0",
     LightllmKvLayout::single_tensor, /*fixed_max_total_token_num=*/0, /*check_mem_size=*/true, /*cuda_graphs=*/true,
     /*check_max_len_infer=*/true, /*models_mla=*/true},
}};

}  // namespace

std::span<const LightllmVersionRules> lightllm_versions() { return kLightllmVersions; }

const LightllmVersionRules& lightllm_version_rules(LightllmVersion version) {
  return version_rules(lightllm_versions(), version);
}

std::string_view lightllm_version_name(LightllmVersion version) { return lightllm_version_rules(version).name; }

LightllmVersion parse_lightllm_version(std::string_view text, std::string_view what) {
  return find_version(lightllm_versions(), text, "LightLLM", what).version;
}

}  // namespace headroom::engine
