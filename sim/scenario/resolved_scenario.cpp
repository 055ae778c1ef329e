#include "sim/scenario/resolved_scenario.hpp"

#include "sim/scenario/policy_yaml.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "sim/allocator/alloc_config.hpp"
#include "sim/core/input_file.hpp"
#include "sim/scenario/simulation.hpp"

namespace headroom::scenario {

namespace {

template <class T>
void opt(YAML::Emitter& e, const char* key, const std::optional<T>& v) {
  if (v) e << YAML::Key << key << YAML::Value << *v;
}
void sizes(YAML::Emitter& e, const char* key, const std::optional<std::vector<int>>& v) {
  if (!v) return;
  e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int s : *v) e << s;
  e << YAML::EndSeq;
}
std::string str(std::string_view s) { return std::string(s); }

void emit_engine(YAML::Emitter& e, const engine::EngineConfig& config) {
  e << YAML::BeginMap;
  if (const auto* v = std::get_if<engine::VllmConfig>(&config)) {
    e << YAML::Key << "kind" << YAML::Value << "vllm";
    e << YAML::Key << "gpu_memory_utilization" << YAML::Value << v->gpu_memory_utilization;
    opt(e, "max_num_seqs", v->max_num_seqs);
    opt(e, "max_num_batched_tokens", v->max_num_batched_tokens);
    opt(e, "block_size", v->block_size);
    opt(e, "max_model_len", v->max_model_len);
    e << YAML::Key << "enable_prefix_caching" << YAML::Value << v->enable_prefix_caching;
    sizes(e, "cudagraph_capture_sizes", v->cudagraph_capture_sizes);
    e << YAML::Key << "cudagraph_mode" << YAML::Value << str(engine::cudagraph_mode_name(v->cudagraph_mode));
    e << YAML::Key << "enforce_eager" << YAML::Value << v->enforce_eager;
    e << YAML::Key << "num_speculative_tokens" << YAML::Value << v->num_speculative_tokens;
    e << YAML::Key << "kv_cache_dtype" << YAML::Value << str(model::kv_cache_dtype_name(v->kv_cache_dtype));
    if (v->attention_backend)
      e << YAML::Key << "attention_backend" << YAML::Value << str(engine::vllm_attention_backend_name(*v->attention_backend));
    if (v->kv_cache_memory_bytes) e << YAML::Key << "kv_cache_memory_bytes" << YAML::Value << *v->kv_cache_memory_bytes;
    opt(e, "num_gpu_blocks_override", v->num_gpu_blocks_override);
    e << YAML::Key << "sampler" << YAML::Value << str(model::sampler_kind_name(v->sampler));
    e << YAML::Key << "usage_context" << YAML::Value << str(engine::usage_context_name(v->usage_context));
    e << YAML::Key << "mla_decode_out" << YAML::Value << str(model::decode_out_buffer_name(v->mla_decode_out));
  } else if (const auto* s = std::get_if<engine::SglangConfig>(&config)) {
    e << YAML::Key << "kind" << YAML::Value << "sglang";
    opt(e, "mem_fraction_static", s->mem_fraction_static);
    opt(e, "chunked_prefill_size", s->chunked_prefill_size);
    e << YAML::Key << "max_prefill_tokens" << YAML::Value << s->max_prefill_tokens;
    opt(e, "max_running_requests", s->max_running_requests);
    opt(e, "max_total_tokens", s->max_total_tokens);
    opt(e, "cuda_graph_max_bs", s->cuda_graph_max_bs);
    sizes(e, "cuda_graph_bs", s->cuda_graph_bs);
    e << YAML::Key << "disable_cuda_graph" << YAML::Value << s->disable_cuda_graph;
    opt(e, "context_length", s->context_length);
    if (s->attention_backend)
      e << YAML::Key << "attention_backend" << YAML::Value << str(engine::sglang_attention_backend_name(*s->attention_backend));
    e << YAML::Key << "page_size" << YAML::Value << s->page_size;
    e << YAML::Key << "schedule_conservativeness" << YAML::Value << s->schedule_conservativeness;
    e << YAML::Key << "kv_cache_dtype" << YAML::Value << str(model::kv_cache_dtype_name(s->kv_cache_dtype));
    opt(e, "gpu_memory_capacity_mib", s->gpu_memory_capacity_mib);
    e << YAML::Key << "sampling_backend" << YAML::Value << str(model::sampler_kind_name(s->sampling_backend));
  } else {
    const auto& l = std::get<engine::LightllmConfig>(config);
    e << YAML::Key << "kind" << YAML::Value << "lightllm";
    e << YAML::Key << "mem_fraction" << YAML::Value << l.mem_fraction;
    opt(e, "max_total_token_num", l.max_total_token_num);
    opt(e, "batch_max_tokens", l.batch_max_tokens);
    e << YAML::Key << "running_max_req_size" << YAML::Value << l.running_max_req_size;
    e << YAML::Key << "max_req_total_len" << YAML::Value << l.max_req_total_len;
    e << YAML::Key << "chunked_prefill_size" << YAML::Value << l.chunked_prefill_size;
    e << YAML::Key << "disable_chunked_prefill" << YAML::Value << l.disable_chunked_prefill;
    e << YAML::Key << "graph_max_batch_size" << YAML::Value << l.graph_max_batch_size;
    e << YAML::Key << "graph_split_batch_size" << YAML::Value << l.graph_split_batch_size;
    e << YAML::Key << "graph_grow_step_size" << YAML::Value << l.graph_grow_step_size;
    opt(e, "graph_max_len_in_batch", l.graph_max_len_in_batch);
    e << YAML::Key << "disable_cudagraph" << YAML::Value << l.disable_cudagraph;
    e << YAML::Key << "disable_check_max_len_infer" << YAML::Value << l.disable_check_max_len_infer;
  }
  e << YAML::EndMap;
}

// The workload section as written, with file paths replaced by the resolved absolute ones.
YAML::Node workload_node(const Scenario& s) {
  refuse_special_file(s.file, "scenario");
  std::ifstream in(s.file);
  std::stringstream buf;
  buf << in.rdbuf();
  YAML::Node w = YAML::Clone(YAML::Load(buf.str())["workload"]);
  auto absolute = [](const std::string& p) { return std::filesystem::absolute(p).lexically_normal().string(); };
  if (s.workload.trace) w["trace"]["path"] = absolute(s.workload.trace->path);
  if (s.workload.synthetic && s.workload.synthetic->lengths_file)
    w["synthetic"]["lengths_file"]["path"] = absolute(s.workload.synthetic->lengths_file->path);
  if (!w["seed"]) w["seed"] = s.workload.seed;
  return w;
}

}  // namespace

std::string resolved_scenario_yaml(const Scenario& s, const engine::EngineConfig& resolved_engine) {
  YAML::Emitter e;
  e << YAML::Comment("as resolved by headroom: every default filled in");
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << s.name;
  e << YAML::Key << "seed" << YAML::Value << s.seed;
  e << YAML::Key << "gpu" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "profile" << YAML::Value << (s.gpu_name.find('/') != std::string::npos
                                                     ? std::filesystem::absolute(s.gpu_name).lexically_normal().string()
                                                     : s.gpu_name);
  e << YAML::Key << "visible" << YAML::Value << s.visible.value_or(s.gpu.capacity_bytes);
  e << YAML::Key << "other_processes" << YAML::Value << s.other_processes;
  e << YAML::EndMap;
  e << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << s.model_name;
  e << YAML::Key << "tp" << YAML::Value << s.tp;
  e << YAML::EndMap;
  e << YAML::Key << "engine" << YAML::Value;
  emit_engine(e, resolved_engine);
  e << YAML::Key << "allocator" << YAML::Value << alloc::to_string(s.allocator);
  e << YAML::Key << "workload" << YAML::Value << workload_node(s);
  e << YAML::Key << "on_oom" << YAML::Value << (s.on_oom == engine::OnOom::stop ? "stop" : "continue");
  e << YAML::Key << "policy" << YAML::Value;
  emit_policy(e, s.policy);
  if (!s.compare.empty()) {
    e << YAML::Key << "compare" << YAML::Value << YAML::BeginSeq;
    for (const policy::PolicySpec& p : s.compare) emit_policy(e, p);
    e << YAML::EndSeq;
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

std::string resolved_scenario_yaml(const Scenario& s) {
  engine::EngineConfig config = s.engine;
  const engine::Deployment d = deployment(s);
  std::visit([&](auto& c) { engine::resolve(c, d); }, config);
  return resolved_scenario_yaml(s, config);
}

}  // namespace headroom::scenario
