#pragma once
// The `engine:` section of a scenario: `kind:` one of the registered engines (engine_registry.hpp)
// and that engine's own knob names, which the engine reads (docs/scenario.md lists them with their
// defaults). Unknown knobs get a did-you-mean.
#include "sim/core/yaml_section.hpp"
#include "sim/engine/engine_config.hpp"

namespace headroom::scenario {

engine::EngineConfig read_engine(const YamlSection& section);

}  // namespace headroom::scenario
