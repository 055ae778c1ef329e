#include "sim/engine/engine_config.hpp"

#include "sim/engine/engine_registry.hpp"

namespace headroom::engine {

model::Engine engine_of(const EngineConfig& config) { return engine_traits(config).id; }

}  // namespace headroom::engine
