#pragma once
// One simulation of a scenario under a start-up policy: the policy starts the engine, the server
// replays the workload, and the latency distributions are summarised. Shared by `run`, `compare`
// and `tune`.
#include <functional>

#include "sim/engine/server.hpp"
#include "sim/policy/policy.hpp"
#include "sim/report/outcome.hpp"
#include "sim/scenario/scenario.hpp"

namespace headroom::scenario {

using report::Outcome;

struct SimulateOptions {
  std::function<void(const engine::RequestRecord&)> on_request;
  std::function<void(double)> on_progress;
  // Called once the policy has started the engine (or failed to), before any request is served.
  std::function<void(const policy::PolicyStart&)> on_started;
  bool check_invariants = false;  // as `headroom run --check`: from start-up on (slow)
  bool keep_memory = false;  // keep the start-up's allocator and device (default: freed at the end)
  bool repeat_closed_runs = true;  // engine::ServingOptions::repeat_closed_runs
};

Outcome simulate(const Scenario& scenario, const policy::PolicySpec& policy, const SimulateOptions& options = {});

}  // namespace headroom::scenario
