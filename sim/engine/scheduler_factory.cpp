#include "sim/engine/scheduler_factory.hpp"

#include <stdexcept>

#include "sim/engine/lightllm_scheduler.hpp"
#include "sim/engine/sglang_scheduler.hpp"
#include "sim/engine/vllm_scheduler.hpp"

namespace headroom::engine {

std::unique_ptr<Scheduler> make_scheduler(const StartupResult& startup, const model::ModelConfig&) {
  if (!startup.ok) throw std::logic_error("make_scheduler: the engine did not start");
  if (const auto* v = std::get_if<VllmConfig>(&startup.config))
    return std::make_unique<VllmScheduler>(vllm_scheduler_limits(*v, startup.kv_blocks));
  if (const auto* s = std::get_if<SglangConfig>(&startup.config))
    return std::make_unique<SglangScheduler>(
        sglang_scheduler_limits(*s, startup.kv_tokens, startup.max_running_requests));
  const auto& l = std::get<LightllmConfig>(startup.config);
  return std::make_unique<LightllmScheduler>(lightllm_scheduler_limits(l, startup.kv_tokens));
}

}  // namespace headroom::engine
