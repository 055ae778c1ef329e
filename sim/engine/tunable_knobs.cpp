#include "sim/engine/tunable_knobs.hpp"

namespace headroom::engine {

std::span<const WholeKnob> whole_knobs() {
  // vLLM max_num_seqs / max_num_batched_tokens (vllm/engine/arg_utils.py), SGLang
  // max_running_requests / chunked_prefill_size (python/sglang/srt/server_args.py), LightLLM
  // running_max_req_size / batch_max_tokens (lightllm/server/api_cli.py): engine_limits.hpp bounds each.
  static const WholeKnob all[] = {
      {model::Engine::vllm, "max_num_seqs",
       [](EngineConfig& c, std::int64_t v) { std::get<VllmConfig>(c).max_num_seqs = v; }},
      {model::Engine::vllm, "max_num_batched_tokens",
       [](EngineConfig& c, std::int64_t v) { std::get<VllmConfig>(c).max_num_batched_tokens = v; }},
      {model::Engine::sglang, "max_running_requests",
       [](EngineConfig& c, std::int64_t v) { std::get<SglangConfig>(c).max_running_requests = v; }},
      {model::Engine::sglang, "chunked_prefill_size",
       [](EngineConfig& c, std::int64_t v) { std::get<SglangConfig>(c).chunked_prefill_size = v; }},
      {model::Engine::lightllm, "running_max_req_size",
       [](EngineConfig& c, std::int64_t v) { std::get<LightllmConfig>(c).running_max_req_size = v; }},
      {model::Engine::lightllm, "batch_max_tokens",
       [](EngineConfig& c, std::int64_t v) { std::get<LightllmConfig>(c).batch_max_tokens = v; }},
  };
  return all;
}

const WholeKnob* find_whole_knob(std::string_view knob) {
  for (const WholeKnob& k : whole_knobs())
    if (k.knob == knob) return &k;
  return nullptr;
}

std::string_view knob_flag_name(const EngineTraits& engine, std::string_view knob) {
  for (const EngineFlag& f : engine.command_line().flags)
    if (f.use == FlagUse::knob && f.target == knob) return f.names.substr(0, f.names.find(' '));
  return "";
}

}  // namespace headroom::engine
