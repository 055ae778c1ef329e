#include "sim/scenario/deployment_facts.hpp"

namespace headroom::scenario {

std::string engine_label(const engine::EngineConfig& config) {
  switch (engine::engine_of(config)) {
    case model::Engine::vllm: return "vLLM";
    case model::Engine::sglang: return "SGLang";
    case model::Engine::lightllm: return "LightLLM";
  }
  return "?";
}

nlohmann::json deployment_facts_json(const Scenario& s) {
  return {{"engine", engine_label(s.engine)},
          {"model", s.model.name},
          {"tp", s.tp},
          {"gpu", {{"profile", s.gpu.name}, {"source", s.gpu.source},
                   {"capacity_bytes", s.visible.value_or(s.gpu.capacity_bytes)}}}};
}

}  // namespace headroom::scenario
