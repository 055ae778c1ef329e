#include "sim/scenario/outcome.hpp"

#include "sim/report/run_report.hpp"
#include "sim/scenario/simulation.hpp"

namespace headroom::scenario {

Outcome simulate(const Scenario& sc, const policy::PolicySpec& spec, const SimulateOptions& options) {
  Outcome o;
  o.spec = spec;
  o.label = spec.label.empty() ? policy::describe(spec) : spec.label;
  engine::Deployment dep = deployment(sc);
  dep.check_allocator_each_operation = options.check_invariants;
  o.start = start_policy(sc, spec, dep);
  if (options.on_started) options.on_started(o.start);
  if (o.start.startup.ok) {
    report::LatencyCollector lat;
    o.serving = serve(
        sc, o.start.startup,
        [&](const engine::RequestRecord& r) {
          lat.add(r);
          if (options.on_request) options.on_request(r);
        },
        ServeOptions{.on_progress = options.on_progress,
                     .check_invariants = options.check_invariants,
                     .release_canary_on_oom = o.start.release_canary_on_oom,
                     .repeat_closed_runs = options.repeat_closed_runs});
    o.ttft = report::LatencyCollector::summarize(lat.ttft);
    o.tpot = report::LatencyCollector::summarize(lat.tpot);
    o.e2e = report::LatencyCollector::summarize(lat.e2e);
    o.queue = report::LatencyCollector::summarize(lat.queue);
    if (o.serving->end_time_s > 0) {
      o.tokens_per_s = static_cast<double>(o.serving->generated_tokens) / o.serving->end_time_s;
      o.requests_per_s = static_cast<double>(o.serving->completed) / o.serving->end_time_s;
    }
  }
  if (!options.keep_memory) {  // the allocator refers to the device: release it first
    engine::ServingMemory& m = o.start.startup.memory;
    m.slots.reset();
    m.allocator.reset();
    m.device.reset();
    m.weights.clear();
    m.kv_cache.clear();
    m.request_pool.clear();
    m.graph_rng_state.clear();
    m.canary = nullptr;
  }
  return o;
}

}  // namespace headroom::scenario
