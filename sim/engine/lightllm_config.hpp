#pragma once
// LightLLM start-up knobs under its own names and defaults (docs/serving-memory-model.md §3).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/deployment.hpp"
#include "sim/engine/lightllm_versions.hpp"
#include "sim/model/forward_program.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/sampler_program.hpp"

namespace headroom::engine {

struct LightllmConfig {
  LightllmVersion version = LightllmVersion::current;  // the release line (lightllm_versions.hpp, §3.1)
  double mem_fraction = 0.9;
  std::optional<std::int64_t> max_total_token_num;  // skips the profile (§3)
  std::optional<std::int64_t> batch_max_tokens;     // default: §3
  std::int64_t running_max_req_size = 1000;
  std::int64_t max_req_total_len = 16384;
  std::int64_t chunked_prefill_size = 4096;
  bool disable_chunked_prefill = false;
  int graph_max_batch_size = 256;
  int graph_split_batch_size = 32;
  int graph_grow_step_size = 16;
  std::optional<std::int64_t> graph_max_len_in_batch;  // default: max_req_total_len
  bool disable_cudagraph = false;
  bool disable_check_max_len_infer = false;  // env DISABLE_CHECK_MAX_LEN_INFER
};

// §3: min(max_req_total_len, 2 × chunked_prefill_size + 256) with chunked prefill, else
// max_req_total_len.
std::int64_t lightllm_default_batch_max_tokens(std::int64_t max_req_total_len, std::int64_t chunked_prefill_size,
                                               bool chunked_prefill);

// §3, lightllm/common/basemodel/cuda_graph.py: 1 .. split, then split + grow, split + 2·grow, ...
// below the maximum, then the maximum itself.
std::vector<int> lightllm_graph_batch_sizes(int graph_max_batch_size, int graph_split_batch_size,
                                            int graph_grow_step_size);

std::vector<FilledDefault> resolve(LightllmConfig& config, const Deployment& deployment);

}  // namespace headroom::engine
