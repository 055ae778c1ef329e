#pragma once
// One simulation of a scenario under a start-up policy: the policy starts the engine, the server
// replays the workload, and the latency distributions are summarised. Shared by `run`, `compare`
// and `tune`.
#include <functional>
#include <optional>
#include <string>

#include "sim/engine/server.hpp"
#include "sim/policy/policy.hpp"
#include "sim/report/percentiles.hpp"
#include "sim/scenario/scenario.hpp"

namespace headroom::scenario {

struct Outcome {
  std::string label;                       // the policy's label or description
  policy::PolicySpec spec;
  policy::PolicyStart start;               // start.startup.ok: the engine started
  std::optional<engine::ServingResult> serving;
  report::Distribution ttft, tpot, e2e;
  double tokens_per_s = 0, requests_per_s = 0;

  bool started() const { return start.startup.ok; }
  // An OOM anywhere: at start-up (a PyTorch OOM, not an engine check) or while serving.
  bool startup_oom() const { return !start.startup.ok && start.startup.oom.has_value(); }
  bool serving_oom() const { return serving && !serving->ooms.empty(); }
  // Ran out of memory, or could not start at all.
  bool failed() const { return !started() || serving_oom(); }
};

struct SimulateOptions {
  std::function<void(const engine::RequestRecord&)> on_request;
  std::function<void(double)> on_progress;
  bool check_invariants = false;  // as `headroom run --check`: from start-up on (slow)
  bool keep_memory = false;  // keep the start-up's allocator and device (default: freed at the end)
};

Outcome simulate(const Scenario& scenario, const policy::PolicySpec& policy, const SimulateOptions& options = {});

}  // namespace headroom::scenario
