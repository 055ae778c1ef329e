#include "sim/scenario/engine_yaml.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::scenario {

namespace {

std::int64_t whole(const YamlSection& s, std::string_view key, std::int64_t lo, std::int64_t hi = INT64_MAX) {
  return s.integer(key, s.required(key), lo, hi);
}
template <class T>
void optional_whole(const YamlSection& s, std::string_view key, std::optional<T>& out, std::int64_t lo,
                    std::int64_t hi = INT64_MAX) {
  if (s.present(key)) out = static_cast<T>(whole(s, key, lo, hi));
}
template <class T>
void whole_into(const YamlSection& s, std::string_view key, T& out, std::int64_t lo, std::int64_t hi = INT64_MAX) {
  if (s.present(key)) out = static_cast<T>(whole(s, key, lo, hi));
}
double fraction(const YamlSection& s, std::string_view key) {
  YAML::Node v = s.required(key);
  double d = s.number(key, v, false);
  if (d > 1.0) s.fail(v, key, fmt::format("expected a fraction in (0, 1], got '{}'", s.scalar(key, v)));
  return d;
}
std::vector<int> size_list(const YamlSection& s, std::string_view key) {
  YAML::Node v = s.required(key);
  if (!v.IsSequence()) s.fail(v, key, "expected a list of batch sizes, e.g. [1, 2, 4, 8]");
  std::vector<int> out;
  for (const auto& item : v) out.push_back(static_cast<int>(s.integer(key, item, 1, 1 << 20)));
  return out;
}
// A value one of the engine layer's parsers reads (they name `what` in their errors).
template <class Parse>
auto parsed(const YamlSection& s, std::string_view key, Parse&& parse) {
  YAML::Node v = s.required(key);
  return parse(s.scalar(key, v), fmt::format("{}: key '{}'", s.where(v), s.key_path(key)));
}

engine::VllmConfig read_vllm(const YamlSection& s) {
  s.check_keys({"kind", "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "block_size",
                "max_model_len", "enable_prefix_caching", "cudagraph_capture_sizes", "cudagraph_mode",
                "enforce_eager", "num_speculative_tokens", "kv_cache_dtype", "attention_backend",
                "kv_cache_memory_bytes", "num_gpu_blocks_override", "sampler", "usage_context", "mla_decode_out"});
  engine::VllmConfig c;
  if (s.present("gpu_memory_utilization")) c.gpu_memory_utilization = fraction(s, "gpu_memory_utilization");
  optional_whole(s, "max_num_seqs", c.max_num_seqs, 1);
  optional_whole(s, "max_num_batched_tokens", c.max_num_batched_tokens, 1);
  optional_whole(s, "block_size", c.block_size, 1, 1 << 16);
  optional_whole(s, "max_model_len", c.max_model_len, 1);
  s.optional_bool("enable_prefix_caching", c.enable_prefix_caching);
  if (s.present("cudagraph_capture_sizes")) c.cudagraph_capture_sizes = size_list(s, "cudagraph_capture_sizes");
  if (s.present("cudagraph_mode")) c.cudagraph_mode = parsed(s, "cudagraph_mode", engine::parse_cudagraph_mode);
  s.optional_bool("enforce_eager", c.enforce_eager);
  whole_into(s, "num_speculative_tokens", c.num_speculative_tokens, 0, 64);
  if (s.present("kv_cache_dtype")) c.kv_cache_dtype = parsed(s, "kv_cache_dtype", model::parse_kv_cache_dtype);
  if (s.present("attention_backend"))
    c.attention_backend = parsed(s, "attention_backend", engine::parse_vllm_attention_backend);
  if (s.present("kv_cache_memory_bytes")) c.kv_cache_memory_bytes = s.bytes("kv_cache_memory_bytes");
  optional_whole(s, "num_gpu_blocks_override", c.num_gpu_blocks_override, 1);
  if (s.present("sampler")) c.sampler = parsed(s, "sampler", model::parse_sampler_kind);
  if (s.present("usage_context")) c.usage_context = parsed(s, "usage_context", engine::parse_usage_context);
  if (s.present("mla_decode_out"))
    c.mla_decode_out = parsed(s, "mla_decode_out", model::parse_decode_out_buffer);
  return c;
}

engine::SglangConfig read_sglang(const YamlSection& s) {
  s.check_keys({"kind", "mem_fraction_static", "chunked_prefill_size", "max_prefill_tokens", "max_running_requests",
                "max_total_tokens", "cuda_graph_max_bs", "cuda_graph_bs", "disable_cuda_graph", "context_length",
                "attention_backend", "page_size", "schedule_conservativeness", "kv_cache_dtype",
                "gpu_memory_capacity_mib", "sampling_backend"});
  engine::SglangConfig c;
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
    c.attention_backend = parsed(s, "attention_backend", engine::parse_sglang_attention_backend);
  whole_into(s, "page_size", c.page_size, 1, 1 << 16);
  s.optional_number("schedule_conservativeness", c.schedule_conservativeness);
  if (s.present("kv_cache_dtype")) c.kv_cache_dtype = parsed(s, "kv_cache_dtype", model::parse_kv_cache_dtype);
  if (s.present("gpu_memory_capacity_mib")) c.gpu_memory_capacity_mib = s.positive("gpu_memory_capacity_mib");
  if (s.present("sampling_backend")) c.sampling_backend = parsed(s, "sampling_backend", model::parse_sampler_kind);
  return c;
}

engine::LightllmConfig read_lightllm(const YamlSection& s) {
  s.check_keys({"kind", "mem_fraction", "max_total_token_num", "batch_max_tokens", "running_max_req_size",
                "max_req_total_len", "chunked_prefill_size", "disable_chunked_prefill", "graph_max_batch_size",
                "graph_split_batch_size", "graph_grow_step_size", "graph_max_len_in_batch", "disable_cudagraph",
                "disable_check_max_len_infer"});
  engine::LightllmConfig c;
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

}  // namespace

engine::EngineConfig read_engine(const YamlSection& s) {
  std::string kind = s.choice("kind", {"vllm", "sglang", "lightllm"});
  if (kind == "vllm") return read_vllm(s);
  if (kind == "sglang") return read_sglang(s);
  return read_lightllm(s);
}

}  // namespace headroom::scenario
