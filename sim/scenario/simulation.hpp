#pragma once
// One simulation of a scenario: the engine's start-up, then serving the workload with the scheduler
// and the latency model start-up decided. Shared by `headroom run` and the serving benchmark.
#include <functional>

#include "sim/engine/server.hpp"
#include "sim/engine/startup_result.hpp"
#include "sim/policy/policy.hpp"
#include "sim/scenario/scenario.hpp"

namespace headroom::scenario {

// The rank of the deployment a scenario describes.
engine::Deployment deployment(const Scenario& scenario);

// Starts the engine under a start-up policy; a knob the engine rejects on the way (a KV cache too
// large to simulate) is an InputError naming the scenario's line (located()).
policy::PolicyStart start_policy(const Scenario& scenario, const policy::PolicySpec& spec,
                                 const engine::Deployment& deployment);

// Starts the engine the scenario names (a failed start-up is a result: ok = false).
engine::StartupResult start(const Scenario& scenario);

struct ServeOptions {
  std::function<void(double)> on_progress;
  bool check_invariants = false;  // as `headroom run --check` (slow)
  // A canary start-up left is freed at the first OOM and the step retried.
  bool release_canary_on_oom = false;
  bool repeat_closed_runs = true;  // engine::ServingOptions::repeat_closed_runs
};

// Serves the scenario's workload on a started engine. `on_request` sees every request as it leaves.
engine::ServingResult serve(const Scenario& scenario, engine::StartupResult& startup,
                            const std::function<void(const engine::RequestRecord&)>& on_request,
                            const ServeOptions& options = {});

}  // namespace headroom::scenario
