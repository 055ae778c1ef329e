#pragma once
// The SGLang release lines whose start-up this simulator models (docs/serving-memory-model.md §2.6),
// each a row of one table: its defaults, request pool and CUDA-graph rules as that release's source
// has them.
#include <span>
#include <string_view>

namespace headroom::engine {

enum class SglangVersion { v0_4, current };

// How ServerArgs fills mem_fraction_static, chunked_prefill_size and cuda_graph_max_bs (§2.1).
enum class SglangMemoryDefaultsRule {
  by_tp_size,       // 0.4: MFS by tp (0.88 … 0.79); 2048 / 8192 prefill and 8 / 80 / 160 graphs around 25,000 MiB
  reserved_memory,  // PR #10975: MFS = (gpu_mem − reserved) / gpu_mem, the §2.1 table
};

// The default CUDA-graph batch sizes (cuda_graph_runner.py get_batch_sizes_to_capture).
enum class SglangGraphSizesRule {
  up_to_160,     // 0.4: [1, 2, 4, 8] + range(16, 161, 8) (+ range(160, 257, 8) above 81,920 MiB without DP)
  current_list,  // §2.3
};

struct SglangVersionRules {
  SglangVersion version;
  std::string_view name;     // engine.version
  std::string_view sources;  // where the rules below come from: file@tag
  SglangMemoryDefaultsRule memory_defaults;
  SglangGraphSizesRule graph_sizes;
  int req_to_token_pool_extra_rows;     // ReqToTokenPool(size = max_num_reqs + this)
  bool graph_logits_in_shared_buffer;  // next_token_logits_buffer (current) or each graph keeps its own logits (0.4)
};

// Oldest first; the last row is the default.
std::span<const SglangVersionRules> sglang_versions();
const SglangVersionRules& sglang_version_rules(SglangVersion version);
std::string_view sglang_version_name(SglangVersion version);  // "0.4", "current"
SglangVersion parse_sglang_version(std::string_view text, std::string_view what);

}  // namespace headroom::engine
