// LightLLM's knobs in a scenario's `engine:` mapping (docs/scenario.md), read and written back.
#include "sim/engine/knob_yaml.hpp"

namespace headroom::engine {

using namespace knob_yaml;

EngineConfig read_lightllm_knobs(const YamlSection& s) {
  s.check_keys({"kind", "version", "mem_fraction", "max_total_token_num", "batch_max_tokens", "running_max_req_size",
                "max_req_total_len", "chunked_prefill_size", "disable_chunked_prefill", "graph_max_batch_size",
                "graph_split_batch_size", "graph_grow_step_size", "graph_max_len_in_batch", "disable_cudagraph",
                "disable_check_max_len_infer"});
  LightllmConfig c;
  if (s.present("version")) c.version = parsed(s, "version", parse_lightllm_version);
  if (s.present("mem_fraction")) c.mem_fraction = fraction(s, "mem_fraction");
  optional_whole(s, "max_total_token_num", c.max_total_token_num, 1);
  optional_whole(s, "batch_max_tokens", c.batch_max_tokens, 1);
  whole_into(s, "running_max_req_size", c.running_max_req_size, 1);
  whole_into(s, "max_req_total_len", c.max_req_total_len, 1);
  whole_into(s, "chunked_prefill_size", c.chunked_prefill_size, 1);
  s.optional_bool("disable_chunked_prefill", c.disable_chunked_prefill);
  whole_into(s, "graph_max_batch_size", c.graph_max_batch_size, 1, 1 << 16);
  whole_into(s, "graph_split_batch_size", c.graph_split_batch_size, 1, 1 << 16);
  whole_into(s, "graph_grow_step_size", c.graph_grow_step_size, 1, 1 << 16);
  optional_whole(s, "graph_max_len_in_batch", c.graph_max_len_in_batch, 1);
  s.optional_bool("disable_cudagraph", c.disable_cudagraph);
  s.optional_bool("disable_check_max_len_infer", c.disable_check_max_len_infer);
  return c;
}

void write_lightllm_knobs(YAML::Emitter& e, const EngineConfig& config) {
  const auto& c = std::get<LightllmConfig>(config);
  e << YAML::Key << "kind" << YAML::Value << "lightllm";
  e << YAML::Key << "version" << YAML::Value << str(lightllm_version_name(c.version));
  e << YAML::Key << "mem_fraction" << YAML::Value << c.mem_fraction;
  opt(e, "max_total_token_num", c.max_total_token_num);
  opt(e, "batch_max_tokens", c.batch_max_tokens);
  e << YAML::Key << "running_max_req_size" << YAML::Value << c.running_max_req_size;
  e << YAML::Key << "max_req_total_len" << YAML::Value << c.max_req_total_len;
  e << YAML::Key << "chunked_prefill_size" << YAML::Value << c.chunked_prefill_size;
  e << YAML::Key << "disable_chunked_prefill" << YAML::Value << c.disable_chunked_prefill;
  e << YAML::Key << "graph_max_batch_size" << YAML::Value << c.graph_max_batch_size;
  e << YAML::Key << "graph_split_batch_size" << YAML::Value << c.graph_split_batch_size;
  e << YAML::Key << "graph_grow_step_size" << YAML::Value << c.graph_grow_step_size;
  opt(e, "graph_max_len_in_batch", c.graph_max_len_in_batch);
  e << YAML::Key << "disable_cudagraph" << YAML::Value << c.disable_cudagraph;
  e << YAML::Key << "disable_check_max_len_infer" << YAML::Value << c.disable_check_max_len_infer;
}

}  // namespace headroom::engine
