#include "sim/engine/lightllm_config.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/engine/knob_checks.hpp"
#include "sim/engine/startup.hpp"
#include "sim/model/attention_layers.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::engine {

using namespace knob_checks;

std::int64_t lightllm_default_batch_max_tokens(std::int64_t max_req_total_len, std::int64_t chunked_prefill_size,
                                               bool chunked_prefill) {
  // lightllm/server/api_start.py (§3).
  if (!chunked_prefill) return max_req_total_len;
  return std::min(max_req_total_len, 2 * chunked_prefill_size + 256);
}

std::vector<int> lightllm_graph_batch_sizes(int graph_max_batch_size, int graph_split_batch_size,
                                            int graph_grow_step_size) {
  std::vector<int> sizes;
  for (int s = 1; s <= graph_split_batch_size && s < graph_max_batch_size; ++s) sizes.push_back(s);
  for (int s = graph_split_batch_size + graph_grow_step_size; s < graph_max_batch_size; s += graph_grow_step_size)
    sizes.push_back(s);
  sizes.push_back(graph_max_batch_size);
  return sorted_unique(sizes);
}

std::vector<FilledDefault> resolve(LightllmConfig& c, const Deployment& d) {
  validate_deployment(d);
  std::vector<FilledDefault> filled;
  require_fraction("lightllm", "mem_fraction", c.mem_fraction);
  // Only the MHA/GQA managers' layouts are modelled before current.
  const LightllmVersionRules& version = lightllm_version_rules(c.version);
  if (!version.models_mla && d.model.is_mla())
    throw EngineConfigError("version", fmt::format("lightllm version {}: model '{}' uses MLA, which this simulator "
                                                   "models only for LightLLM current",
                                                   version.name, d.model.name));
  // LightLLM has no model file for the windowed models modelled here (ModelTC/lightllm
  // lightllm/models/: no gpt_oss or gemma2; its gemma3 is the multimodal Gemma3ForConditionalGeneration,
  // whose windowed layers differ only in their RoPE tables), so it cannot serve them.
  if (model::has_sliding_window(d.model))
    throw EngineConfigError("kind", fmt::format("lightllm: model '{}' has sliding-window layers; LightLLM serves no "
                                                 "such {} model (lightllm/models/ has no model file for it)",
                                                 d.model.name, model::architecture_name(d.model.architecture)));
  // ModelTC/lightllm lightllm/models/ has no llama4 model file.
  if (d.model.architecture == model::Architecture::llama4)
    throw EngineConfigError("kind", fmt::format("lightllm: model '{}' (llama4): LightLLM serves no Llama 4 model "
                                                 "(lightllm/models/ has no model file for it)",
                                                 d.model.name));
  require_range("lightllm", "running_max_req_size", c.running_max_req_size, 1, limits::kMaxRunningRequests);
  require_range("lightllm", "max_req_total_len", c.max_req_total_len, 1, limits::kMaxContextTokens);
  // _init_custom refuses some rope_scaling types (lightllm_rotary_tables throws for them).
  (void)lightllm_rotary_tables(d.model, c.version, c.max_req_total_len + 8);
  require_range("lightllm", "chunked_prefill_size", c.chunked_prefill_size, 1, limits::kMaxBatchTokens);
  require_at_least("lightllm", "graph_max_batch_size", c.graph_max_batch_size, 1);
  require_at_least("lightllm", "graph_split_batch_size", c.graph_split_batch_size, 1);
  require_at_least("lightllm", "graph_grow_step_size", c.graph_grow_step_size, 1);
  // 2.0.0 (api_server.py @ 8b8a4e13c): no memory profile, --max_total_token_num 6000 by default;
  // no CUDA graphs and no check prefill in basemodel.py.
  if (version.fixed_max_total_token_num > 0) {
    if (!c.max_total_token_num) {
      c.max_total_token_num = version.fixed_max_total_token_num;
      filled.push_back({"max_total_token_num", std::to_string(*c.max_total_token_num),
                        fmt::format("LightLLM {}'s --max_total_token_num default (§3.1)", version.name)});
    }
    if (!c.batch_max_tokens) {
      c.batch_max_tokens = std::max(*c.max_total_token_num / 6, c.max_req_total_len);
      filled.push_back({"batch_max_tokens", std::to_string(*c.batch_max_tokens),
                        fmt::format("LightLLM {}: max(int(1/6 × max_total_token_num), max_req_total_len) (§3.1)",
                                    version.name)});
    }
  }
  if (!version.cuda_graphs && !c.disable_cudagraph) {
    c.disable_cudagraph = true;
    filled.push_back({"disable_cudagraph", "true", fmt::format("LightLLM {} has no CUDA graphs (§3.1)", version.name)});
  }
  if (!version.check_max_len_infer && !c.disable_check_max_len_infer) {
    c.disable_check_max_len_infer = true;
    filled.push_back({"disable_check_max_len_infer", "true",
                      fmt::format("LightLLM {} has no _check_max_len_infer (§3.1)", version.name)});
  }
  if (!c.batch_max_tokens) {
    c.batch_max_tokens =
        lightllm_default_batch_max_tokens(c.max_req_total_len, c.chunked_prefill_size, !c.disable_chunked_prefill);
    filled.push_back({"batch_max_tokens", std::to_string(*c.batch_max_tokens),
                      c.disable_chunked_prefill ? "max_req_total_len without chunked prefill (§3)"
                                                : "min(max_req_total_len, 2 × chunked_prefill_size + 256) (§3)"});
  }
  require_range("lightllm", "batch_max_tokens", *c.batch_max_tokens, 1, limits::kMaxBatchTokens);
  // lightllm/server/api_start.py asserts these at start-up (the scheduler checks them again,
  // lightllm_scheduler.cpp); here they name the scenario's key before anything runs.
  if (!c.disable_chunked_prefill && *c.batch_max_tokens < c.chunked_prefill_size)
    throw EngineConfigError("batch_max_tokens", fmt::format("lightllm batch_max_tokens {}: chunked prefill mode needs "
                                                            "batch_max_tokens >= chunked_prefill_size ({})",
                                                            *c.batch_max_tokens, c.chunked_prefill_size));
  if (c.disable_chunked_prefill && *c.batch_max_tokens < c.max_req_total_len)
    throw EngineConfigError("batch_max_tokens", fmt::format("lightllm batch_max_tokens {}: without chunked prefill "
                                                            "batch_max_tokens must be >= max_req_total_len ({})",
                                                            *c.batch_max_tokens, c.max_req_total_len));
  if (!c.graph_max_len_in_batch) {
    c.graph_max_len_in_batch = c.max_req_total_len;
    filled.push_back({"graph_max_len_in_batch", std::to_string(c.max_req_total_len), "max_req_total_len (§3)"});
  }
  require_range("lightllm", "graph_max_len_in_batch", *c.graph_max_len_in_batch, 1, limits::kMaxContextTokens);
  if (c.max_total_token_num)
    require_range("lightllm", "max_total_token_num", *c.max_total_token_num, 1, limits::kMaxKvTokens);
  checked_kv_layout(d, model::Engine::lightllm, model::KvCacheDtype::model);
  return filled;
}

}  // namespace headroom::engine
