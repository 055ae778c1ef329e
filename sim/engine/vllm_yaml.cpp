// vLLM's knobs in a scenario's `engine:` mapping (docs/scenario.md), read and written back.
#include "sim/engine/knob_yaml.hpp"

namespace headroom::engine {

using namespace knob_yaml;

EngineConfig read_vllm_knobs(const YamlSection& s) {
  s.check_keys({"kind", "version", "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "block_size",
                "max_model_len", "enable_prefix_caching", "cudagraph_capture_sizes", "cudagraph_mode",
                "enforce_eager", "num_speculative_tokens", "kv_cache_dtype", "attention_backend",
                "kv_cache_memory_bytes", "num_gpu_blocks_override", "disable_hybrid_kv_cache_manager", "sampler", "usage_context",
                "mla_decode_out", "moe_backend"});
  VllmConfig c;
  if (s.present("version")) c.version = parsed(s, "version", parse_vllm_version);
  if (s.present("gpu_memory_utilization")) c.gpu_memory_utilization = fraction(s, "gpu_memory_utilization");
  optional_whole(s, "max_num_seqs", c.max_num_seqs, 1);
  optional_whole(s, "max_num_batched_tokens", c.max_num_batched_tokens, 1);
  optional_whole(s, "block_size", c.block_size, 1, 1 << 16);
  optional_whole(s, "max_model_len", c.max_model_len, 1);
  s.optional_bool("enable_prefix_caching", c.enable_prefix_caching);
  if (s.present("cudagraph_capture_sizes")) c.cudagraph_capture_sizes = size_list(s, "cudagraph_capture_sizes");
  if (s.present("cudagraph_mode")) c.cudagraph_mode = parsed(s, "cudagraph_mode", parse_cudagraph_mode);
  s.optional_bool("enforce_eager", c.enforce_eager);
  whole_into(s, "num_speculative_tokens", c.num_speculative_tokens, 0, 64);
  if (s.present("kv_cache_dtype")) c.kv_cache_dtype = parsed(s, "kv_cache_dtype", model::parse_kv_cache_dtype);
  if (s.present("attention_backend"))
    c.attention_backend = parsed(s, "attention_backend", parse_vllm_attention_backend);
  if (s.present("kv_cache_memory_bytes")) c.kv_cache_memory_bytes = s.bytes("kv_cache_memory_bytes");
  optional_whole(s, "num_gpu_blocks_override", c.num_gpu_blocks_override, 1);
  s.optional_bool("disable_hybrid_kv_cache_manager", c.disable_hybrid_kv_cache_manager);
  if (s.present("sampler")) c.sampler = parsed(s, "sampler", model::parse_sampler_kind);
  if (s.present("usage_context")) c.usage_context = parsed(s, "usage_context", parse_usage_context);
  if (s.present("mla_decode_out"))
    c.mla_decode_out = parsed(s, "mla_decode_out", model::parse_decode_out_buffer);
  if (s.present("moe_backend")) c.moe_backend = parsed(s, "moe_backend", model::parse_moe_backend);
  return c;
}

void write_vllm_knobs(YAML::Emitter& e, const EngineConfig& config) {
  const auto& c = std::get<VllmConfig>(config);
  e << YAML::Key << "kind" << YAML::Value << "vllm";
  e << YAML::Key << "version" << YAML::Value << str(vllm_version_name(c.version));
  e << YAML::Key << "gpu_memory_utilization" << YAML::Value << c.gpu_memory_utilization;
  opt(e, "max_num_seqs", c.max_num_seqs);
  opt(e, "max_num_batched_tokens", c.max_num_batched_tokens);
  opt(e, "block_size", c.block_size);
  opt(e, "max_model_len", c.max_model_len);
  e << YAML::Key << "enable_prefix_caching" << YAML::Value << c.enable_prefix_caching;
  sizes(e, "cudagraph_capture_sizes", c.cudagraph_capture_sizes);
  if (c.cudagraph_mode) e << YAML::Key << "cudagraph_mode" << YAML::Value << str(cudagraph_mode_name(*c.cudagraph_mode));
  e << YAML::Key << "enforce_eager" << YAML::Value << c.enforce_eager;
  e << YAML::Key << "num_speculative_tokens" << YAML::Value << c.num_speculative_tokens;
  e << YAML::Key << "kv_cache_dtype" << YAML::Value << str(model::kv_cache_dtype_name(c.kv_cache_dtype));
  if (c.attention_backend)
    e << YAML::Key << "attention_backend" << YAML::Value << str(vllm_attention_backend_name(*c.attention_backend));
  if (c.kv_cache_memory_bytes) e << YAML::Key << "kv_cache_memory_bytes" << YAML::Value << *c.kv_cache_memory_bytes;
  opt(e, "num_gpu_blocks_override", c.num_gpu_blocks_override);
  e << YAML::Key << "disable_hybrid_kv_cache_manager" << YAML::Value << c.disable_hybrid_kv_cache_manager;
  e << YAML::Key << "sampler" << YAML::Value << str(model::sampler_kind_name(c.sampler));
  e << YAML::Key << "usage_context" << YAML::Value << str(usage_context_name(c.usage_context));
  e << YAML::Key << "mla_decode_out" << YAML::Value << str(model::decode_out_buffer_name(c.mla_decode_out));
  e << YAML::Key << "moe_backend" << YAML::Value << str(model::moe_backend_name(c.moe_backend));
}

}  // namespace headroom::engine
