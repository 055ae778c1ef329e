#include "sim/engine/scheduler_factory.hpp"

#include <stdexcept>

#include "sim/engine/engine_registry.hpp"

namespace headroom::engine {

std::unique_ptr<Scheduler> make_scheduler(const StartupResult& startup, const model::ModelConfig&) {
  if (!startup.ok) throw std::logic_error("make_scheduler: the engine did not start");
  return engine_traits(startup.config).make_scheduler(startup);
}

}  // namespace headroom::engine
