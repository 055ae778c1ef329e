#include "sim/engine/vllm_versions.hpp"

#include <array>

#include "sim/engine/engine_version.hpp"

namespace headroom::engine {

namespace {

// One row per modelled release line, oldest first (docs/serving-memory-model.md §1.7).
constexpr std::array<VllmVersionRules, 4> kVllmVersions{{
    // V0: vllm/worker/worker.py determine_num_available_blocks, init_device, _warm_up_model (commit
    // 6ae52299e, the 0.6 series). The scheduler, batch defaults and graph sizes stay V1's (§1.7).
    {VllmVersion::v0_6, "0.6", "vllm/worker/worker.py @ 6ae52299e (v0.6)",
     VllmNonKvAccounting::peak_plus_all_non_torch,
     /*snapshot_after_distributed=*/false, /*free_memory_check=*/false, /*v1_kv_cache_check=*/false,
     /*sampler_warmup_after_capture=*/false, VllmBatchDefaultsRule::device_memory_not_a100,
     VllmCaptureSizesRule::step16_above_256, CudaGraphMode::full_and_piecewise,
     /*full_graph_flash_attn_splits=*/0, /*models_mla_and_sliding_window=*/false},
    // V1 by default from v0.8.0: vllm/v1/worker/gpu_worker.py @ v0.8.x init_device (init_gpu_memory
    // before init_worker_distributed_environment, no utilisation check), determine_available_memory
    // (allocated peak + (total − free) − torch allocated after empty_cache), compile_or_warm_up_model
    // (_dummy_sampler_run after capture_model); vllm/engine/arg_utils.py @ v0.8.x
    // _set_default_args_v1 ("h100"/"h200" in the device name); vllm/config.py @ v0.8.x
    // _set_cudagraph_sizes ([1, 2, 4] + range(8, 513, 8), capped by max_num_batched_tokens); piecewise
    // graphs by default (FULL_AND_PIECEWISE became the default in v0.11.0, §1.5).
    {VllmVersion::v0_8, "0.8",
     "vllm/v1/worker/gpu_worker.py, vllm/engine/arg_utils.py, vllm/config.py @ v0.8.x",
     VllmNonKvAccounting::peak_plus_all_non_torch,
     /*snapshot_after_distributed=*/false, /*free_memory_check=*/false, /*v1_kv_cache_check=*/true,
     /*sampler_warmup_after_capture=*/true, VllmBatchDefaultsRule::h100_h200_by_name,
     VllmCaptureSizesRule::step8_to_512, CudaGraphMode::piecewise,
     /*full_graph_flash_attn_splits=*/16, /*models_mla_and_sliding_window=*/false},
    // vllm/v1/worker/gpu_worker.py @ v0.10.x: init_device takes the MemorySnapshot and checks free ≥
    // total × utilisation BEFORE init_worker_distributed_environment (NCCL's buffers count in the
    // non-torch growth); determine_available_memory = requested − memory_profiling's non-KV
    // (vllm/utils/__init__.py @ v0.10.x); the config module's VllmConfig._set_cudagraph_sizes with
    // SchedulerConfig.__post_init__'s cuda_graph_sizes = [min(max_num_seqs × 2, 512)], step 8; arg_utils.py
    // get_batch_defaults ≥ 70 GiB and not A100 (PR #17885); PIECEWISE until v0.11.0;
    // VLLM_FLASH_ATTN_MAX_NUM_SPLITS_FOR_CUDA_GRAPH 16 before #25274.
    {VllmVersion::v0_10, "0.10",
     "vllm/v1/worker/gpu_worker.py, vllm/utils/__init__.py, vllm/config @ v0.10.x",
     VllmNonKvAccounting::growth_since_snapshot,
     /*snapshot_after_distributed=*/false, /*free_memory_check=*/true, /*v1_kv_cache_check=*/true,
     /*sampler_warmup_after_capture=*/true, VllmBatchDefaultsRule::device_memory_not_a100,
     VllmCaptureSizesRule::step8_to_twice_max_num_seqs, CudaGraphMode::piecewise,
     /*full_graph_flash_attn_splits=*/16, /*models_mla_and_sliding_window=*/false},
    // §1.1–§1.6: init_device initialises the distributed environment before its snapshot "so that
    // NCCL buffers are allocated before we measure available memory"; FULL_AND_PIECEWISE (v0.11.0);
    // num_splits 32 (#25274).
    {VllmVersion::current, "current", "vllm/v1/worker/gpu_worker.py, vllm/utils/mem_utils.py @ main (2026)",
     VllmNonKvAccounting::growth_since_snapshot,
     /*snapshot_after_distributed=*/true, /*free_memory_check=*/true, /*v1_kv_cache_check=*/true,
     /*sampler_warmup_after_capture=*/true, VllmBatchDefaultsRule::device_memory_not_a100,
     VllmCaptureSizesRule::step16_above_256, CudaGraphMode::full_and_piecewise,
     /*full_graph_flash_attn_splits=*/32, /*models_mla_and_sliding_window=*/true},
}};

}  // namespace

std::span<const VllmVersionRules> vllm_versions() { return kVllmVersions; }

const VllmVersionRules& vllm_version_rules(VllmVersion version) { return version_rules(vllm_versions(), version); }

std::string_view vllm_version_name(VllmVersion version) { return vllm_version_rules(version).name; }

VllmVersion parse_vllm_version(std::string_view text, std::string_view what) {
  return find_version(vllm_versions(), text, "vLLM", what).version;
}

}  // namespace headroom::engine
