#pragma once
// The start-up knobs of each engine as plain data, under the engines' own names and with their
// own defaults (docs/serving-memory-model.md §1 vLLM, §2 SGLang, §3 LightLLM), one header per
// engine (<engine>_config.hpp). Knobs whose default depends on the model or the GPU are optional;
// resolve() fills them from the deployment, checks every value, and says what it filled and why.
// The default rules are exposed as pure functions so tests can pin the documented numbers.
#include <variant>

#include "sim/engine/deployment.hpp"
#include "sim/engine/lightllm_config.hpp"
#include "sim/engine/sglang_config.hpp"
#include "sim/engine/vllm_config.hpp"

namespace headroom::engine {

// One alternative per engine (engine_registry.hpp describes each).
using EngineConfig = std::variant<VllmConfig, SglangConfig, LightllmConfig>;
model::Engine engine_of(const EngineConfig& config);

}  // namespace headroom::engine
