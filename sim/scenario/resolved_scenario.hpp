#pragma once
// The scenario as resolved: every engine knob with the value start-up used (its defaults filled in
// from the model and the GPU), the GPU's capacity, the allocator's canonical string, and the workload
// with its paths made absolute. `headroom run` writes it beside its outputs; it loads and runs again
// with the same results.
#include <string>

#include "sim/engine/engine_config.hpp"
#include "sim/scenario/scenario.hpp"

namespace headroom::scenario {

std::string resolved_scenario_yaml(const Scenario& scenario, const engine::EngineConfig& resolved_engine);

}  // namespace headroom::scenario
