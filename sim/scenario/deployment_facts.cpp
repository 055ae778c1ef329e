#include "sim/scenario/deployment_facts.hpp"

#include "sim/engine/engine_registry.hpp"

namespace headroom::scenario {

std::string engine_label(const engine::EngineConfig& config) {
  return std::string(engine::engine_traits(config).label);
}

nlohmann::json deployment_facts_json(const Scenario& s) {
  return {{"engine", engine_label(s.engine)},
          {"model", s.model.name},
          {"tp", s.tp},
          {"gpu", {{"profile", s.gpu.name}, {"source", s.gpu.source},
                   {"capacity_bytes", s.visible.value_or(s.gpu.capacity_bytes)}}}};
}

}  // namespace headroom::scenario
