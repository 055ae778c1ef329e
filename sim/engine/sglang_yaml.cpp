// SGLang's knobs in a scenario's `engine:` mapping (docs/scenario.md), read and written back.
#include "sim/engine/knob_yaml.hpp"

namespace headroom::engine {

using namespace knob_yaml;

EngineConfig read_sglang_knobs(const YamlSection& s) {
  s.check_keys({"kind", "version", "mem_fraction_static", "chunked_prefill_size", "max_prefill_tokens", "max_running_requests",
                "max_total_tokens", "cuda_graph_max_bs", "cuda_graph_bs", "disable_cuda_graph", "context_length",
                "attention_backend", "page_size", "schedule_conservativeness", "kv_cache_dtype",
                "gpu_memory_capacity_mib", "sampling_backend", "swa_full_tokens_ratio", "disable_hybrid_swa_memory",
                "disable_radix_cache"});
  SglangConfig c;
  if (s.present("version")) c.version = parsed(s, "version", parse_sglang_version);
  if (s.present("mem_fraction_static")) c.mem_fraction_static = fraction(s, "mem_fraction_static");
  optional_whole(s, "chunked_prefill_size", c.chunked_prefill_size, -1);
  whole_into(s, "max_prefill_tokens", c.max_prefill_tokens, 1);
  optional_whole(s, "max_running_requests", c.max_running_requests, 1);
  optional_whole(s, "max_total_tokens", c.max_total_tokens, 1);
  optional_whole(s, "cuda_graph_max_bs", c.cuda_graph_max_bs, 1, 1 << 16);
  if (s.present("cuda_graph_bs")) c.cuda_graph_bs = size_list(s, "cuda_graph_bs");
  s.optional_bool("disable_cuda_graph", c.disable_cuda_graph);
  optional_whole(s, "context_length", c.context_length, 1);
  if (s.present("attention_backend"))
    c.attention_backend = parsed(s, "attention_backend", parse_sglang_attention_backend);
  whole_into(s, "page_size", c.page_size, 1, 1 << 16);
  s.optional_number("schedule_conservativeness", c.schedule_conservativeness);
  if (s.present("kv_cache_dtype")) c.kv_cache_dtype = parsed(s, "kv_cache_dtype", model::parse_kv_cache_dtype);
  if (s.present("gpu_memory_capacity_mib")) c.gpu_memory_capacity_mib = s.positive("gpu_memory_capacity_mib");
  if (s.present("sampling_backend")) c.sampling_backend = parsed(s, "sampling_backend", model::parse_sampler_kind);
  if (s.present("swa_full_tokens_ratio")) c.swa_full_tokens_ratio = s.positive("swa_full_tokens_ratio");
  s.optional_bool("disable_hybrid_swa_memory", c.disable_hybrid_swa_memory);
  s.optional_bool("disable_radix_cache", c.disable_radix_cache);
  return c;
}

void write_sglang_knobs(YAML::Emitter& e, const EngineConfig& config) {
  const auto& c = std::get<SglangConfig>(config);
  e << YAML::Key << "kind" << YAML::Value << "sglang";
  e << YAML::Key << "version" << YAML::Value << str(sglang_version_name(c.version));
  opt(e, "mem_fraction_static", c.mem_fraction_static);
  opt(e, "chunked_prefill_size", c.chunked_prefill_size);
  e << YAML::Key << "max_prefill_tokens" << YAML::Value << c.max_prefill_tokens;
  opt(e, "max_running_requests", c.max_running_requests);
  opt(e, "max_total_tokens", c.max_total_tokens);
  opt(e, "cuda_graph_max_bs", c.cuda_graph_max_bs);
  sizes(e, "cuda_graph_bs", c.cuda_graph_bs);
  e << YAML::Key << "disable_cuda_graph" << YAML::Value << c.disable_cuda_graph;
  opt(e, "context_length", c.context_length);
  if (c.attention_backend)
    e << YAML::Key << "attention_backend" << YAML::Value << str(sglang_attention_backend_name(*c.attention_backend));
  e << YAML::Key << "page_size" << YAML::Value << c.page_size;
  e << YAML::Key << "schedule_conservativeness" << YAML::Value << c.schedule_conservativeness;
  e << YAML::Key << "kv_cache_dtype" << YAML::Value << str(model::kv_cache_dtype_name(c.kv_cache_dtype));
  opt(e, "gpu_memory_capacity_mib", c.gpu_memory_capacity_mib);
  e << YAML::Key << "sampling_backend" << YAML::Value << str(model::sampler_kind_name(c.sampling_backend));
  e << YAML::Key << "swa_full_tokens_ratio" << YAML::Value << c.swa_full_tokens_ratio;
  e << YAML::Key << "disable_hybrid_swa_memory" << YAML::Value << c.disable_hybrid_swa_memory;
  e << YAML::Key << "disable_radix_cache" << YAML::Value << c.disable_radix_cache;
}

}  // namespace headroom::engine
