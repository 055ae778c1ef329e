#pragma once
// The scheduler an engine serves with, sized from what its start-up decided (KV capacity, block or
// page size, request limits) and its resolved configuration.
#include <memory>

#include "sim/engine/scheduler.hpp"
#include "sim/engine/startup_result.hpp"

namespace headroom::engine {

std::unique_ptr<Scheduler> make_scheduler(const StartupResult& startup, const model::ModelConfig& model);

}  // namespace headroom::engine
