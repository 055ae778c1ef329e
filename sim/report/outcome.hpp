#pragma once
// The one result of one simulation: the start-up under a policy, the serving (when it started), the
// latency distributions and throughput. `run`'s summary and verdict, `compare`'s rows, `sweep`'s
// points and `tune`'s variants all read it; `scenario::simulate` fills it.
#include <optional>
#include <string>

#include "sim/engine/server.hpp"
#include "sim/policy/policy.hpp"
#include "sim/report/percentiles.hpp"

namespace headroom::report {

struct Outcome {
  std::string label;                       // the policy's label or description
  policy::PolicySpec spec;
  policy::PolicyStart start;               // start.startup.ok: the engine started
  std::optional<engine::ServingResult> serving;
  Distribution ttft, tpot, e2e;
  Distribution queue;                      // arrival to first scheduled (RequestRecord::queue_s)
  double tokens_per_s = 0, requests_per_s = 0;

  bool started() const { return start.startup.ok; }
  // An OOM anywhere: at start-up (a PyTorch OOM, not an engine check) or while serving.
  bool startup_oom() const { return !start.startup.ok && start.startup.oom.has_value(); }
  bool serving_oom() const { return serving && !serving->ooms.empty(); }
  // Ran out of memory, or could not start at all.
  bool failed() const { return !started() || serving_oom(); }
};

}  // namespace headroom::report
