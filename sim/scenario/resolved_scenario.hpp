#pragma once
// The scenario as resolved: every engine knob with the value start-up used (its defaults filled in
// from the model and the GPU), the GPU's capacity, the allocator's canonical string, and the workload
// with its paths made absolute. `headroom run`, `compare` and `tune` write it beside their outputs; it loads
// and runs again with the same results.
#include <string>

#include "sim/engine/engine_config.hpp"
#include "sim/scenario/scenario.hpp"

namespace headroom::scenario {

// `source_text`: the YAML the scenario was read from when it is no file (`headroom run --cmd`), where
// the workload section as written is taken from; "" reads the scenario's file.
std::string resolved_scenario_yaml(const Scenario& scenario, const engine::EngineConfig& resolved_engine,
                                   const std::string& source_text = "");

// The same with the scenario's own engine knobs resolved against its deployment (what the `engine`
// policy starts with): for `compare` and `tune`, whose policies and knob values each start the engine
// their own way. InputError for knobs the engine rejects, as at start-up.
std::string resolved_scenario_yaml(const Scenario& scenario);

}  // namespace headroom::scenario
