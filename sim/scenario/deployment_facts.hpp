#pragma once
// What a scenario runs on, as the reports name it: the engine, the model, and the GPU profile with
// its source (datasheet or measured) and the capacity this process sees. `compare` and `tune` save it
// beside their results so that `headroom report DIR` can show it without the scenario file.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/engine_config.hpp"
#include "sim/scenario/scenario.hpp"

namespace headroom::scenario {

// "vLLM", "SGLang", "LightLLM".
std::string engine_label(const engine::EngineConfig& config);

// {"engine": "vLLM", "model": "...", "tp": 1,
//  "gpu": {"profile": "...", "source": "datasheet" | "measured", "capacity_bytes": N}}
nlohmann::json deployment_facts_json(const Scenario& scenario);

}  // namespace headroom::scenario
