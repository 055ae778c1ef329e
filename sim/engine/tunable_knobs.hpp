#pragma once
// The whole-number knobs `headroom tune` searches besides an engine's memory fraction: the requests
// one step runs at once and the tokens of one step, each under the engine's own name (docs/tune.md).
#include <cstdint>
#include <span>
#include <string_view>

#include "sim/engine/engine_config.hpp"
#include "sim/engine/engine_traits.hpp"

namespace headroom::engine {

struct WholeKnob {
  model::Engine engine = model::Engine::vllm;
  std::string_view knob;  // the scenario key under `engine:` (the engine's argument name)
  void (*set)(EngineConfig& config, std::int64_t value) = nullptr;
};

// Per engine: its running-requests knob, then its batch-tokens knob.
std::span<const WholeKnob> whole_knobs();
// nullptr when no engine has a tunable whole-number knob of that name.
const WholeKnob* find_whole_knob(std::string_view knob);
// The flag that sets `knob` as the engine's argument parser spells it ("--max-num-seqs"), from its
// command-line table (<engine>_flags.cpp); "" when the table has none.
std::string_view knob_flag_name(const EngineTraits& engine, std::string_view knob);

}  // namespace headroom::engine
