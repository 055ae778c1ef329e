#pragma once
// Every engine the simulator models, each described once (engine_traits.hpp), looked up by the
// name a scenario gives, by id, or by the configuration a scenario holds.
#include <span>
#include <string_view>

#include "sim/engine/engine_traits.hpp"

namespace headroom::engine {

// In registration order: vllm, sglang, lightllm.
std::span<const EngineTraits* const> engines();

const EngineTraits& engine_traits(model::Engine id);
const EngineTraits& engine_traits(const EngineConfig& config);
// nullptr when no engine has that name.
const EngineTraits* find_engine(std::string_view name);
// The engine of that name; InputError naming `what` and the engines' names otherwise.
const EngineTraits& engine_named(std::string_view name, std::string_view what);
// The engine whose memory-fraction knob is `knob` ("mem_fraction_static"), or nullptr.
const EngineTraits* engine_with_fraction_knob(std::string_view knob);

}  // namespace headroom::engine
