#include "sim/engine/sglang_versions.hpp"

#include <array>

#include "sim/engine/engine_version.hpp"

namespace headroom::engine {

namespace {

// One row per modelled release line, oldest first (docs/serving-memory-model.md §2.6).
constexpr std::array<SglangVersionRules, 2> kSglangVersions{{
    // python/sglang/srt/server_args.py @ v0.4.6 __post_init__ (MFS 0.79/0.81/0.85/0.87/0.88 by tp;
    // chunked_prefill_size 2048 under 25,000 MiB else 8192; cuda_graph_max_bs 8 (tp < 4) or 80 under
    // 25,000 MiB, else 160); model_runner.py @ v0.4.6 init_memory_pool (ReqToTokenPool(size =
    // max_num_reqs + 1)); cuda_graph_runner.py @ v0.4.6 get_batch_sizes_to_capture and
    // capture_one_batch_size (self.output_buffers[bs]: each graph keeps its own logits).
    {SglangVersion::v0_4, "0.4",
     "python/sglang/srt/server_args.py, model_executor/model_runner.py, model_executor/cuda_graph_runner.py @ v0.4.6",
     SglangMemoryDefaultsRule::by_tp_size, SglangGraphSizesRule::up_to_160, /*req_to_token_pool_extra_rows=*/1,
     /*graph_logits_in_shared_buffer=*/false},
    // §2.1–§2.3: server_args.py _handle_gpu_memory_settings (PR #10975), cuda_graph_runner.py (v0.5.x).
    {SglangVersion::current, "current", "python/sglang/srt/server_args.py (PR #10975), cuda_graph_runner.py @ v0.5.x",
     SglangMemoryDefaultsRule::reserved_memory, SglangGraphSizesRule::current_list, /*req_to_token_pool_extra_rows=*/0,
     /*graph_logits_in_shared_buffer=*/true},
}};

}  // namespace

std::span<const SglangVersionRules> sglang_versions() { return kSglangVersions; }

const SglangVersionRules& sglang_version_rules(SglangVersion version) {
  return version_rules(sglang_versions(), version);
}

std::string_view sglang_version_name(SglangVersion version) { return sglang_version_rules(version).name; }

SglangVersion parse_sglang_version(std::string_view text, std::string_view what) {
  return find_version(sglang_versions(), text, "SGLang", what).version;
}

}  // namespace headroom::engine
