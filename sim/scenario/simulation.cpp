#include "sim/scenario/simulation.hpp"

#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/core/out_of_memory.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/scheduler_factory.hpp"
#include "sim/engine/startup.hpp"
#include "sim/latency/step_latency.hpp"
#include "sim/workload/make_source.hpp"

namespace headroom::scenario {

namespace {

model::KvCacheDtype kv_dtype_of(const engine::EngineConfig& c) {
  return engine::engine_traits(c).kv_cache_dtype(c);
}

// The collectives of the rank's steps, as the engine set them up: its TP group's custom all-reduce
// where start-up created one (parallel_ranks.cpp), and its maximum input size.
latency::ParallelCommunication communication_of(const Scenario& sc, const engine::StartupResult& st) {
  latency::ParallelCommunication p;
  p.tp = sc.tp;
  p.pp = sc.parallel.pp;
  p.custom_all_reduce = st.parallel.communicators.custom_all_reduce > 0;
  p.custom_all_reduce_max_size = engine::engine_traits(st.config).parallel.custom_all_reduce_max_size;
  return p;
}

}  // namespace

engine::Deployment deployment(const Scenario& sc) {
  engine::Deployment dep;
  dep.model = sc.model;
  dep.gpu = sc.gpu;
  dep.tp = sc.tp;
  dep.visible = sc.visible;
  dep.other_processes = sc.other_processes;
  dep.graph_exec_bytes_per_layer = sc.graph_exec_bytes_per_layer;
  dep.allocator = sc.allocator;
  dep.parallel = sc.parallel;
  engine::place_rank(dep, sc.engine);
  return dep;
}

engine::StartupResult start(const Scenario& sc) {
  try {
    return engine::start_engine(deployment(sc), sc.engine);
  } catch (const engine::EngineConfigError& e) {
    throw located(sc, e);
  }
}

policy::PolicyStart start_policy(const Scenario& sc, const policy::PolicySpec& spec, const engine::Deployment& dep) {
  try {
    return policy::make_policy(spec)->start(dep, sc.engine);
  } catch (const engine::EngineConfigError& e) {
    throw located(sc, e);
  }
}

engine::ServingResult serve(const Scenario& sc, engine::StartupResult& st,
                            const std::function<void(const engine::RequestRecord&)>& on_request,
                            const ServeOptions& options) {
  if (!st.ok) throw std::logic_error("serve: the engine did not start");
  std::unique_ptr<engine::Scheduler> scheduler = engine::make_scheduler(st, sc.model);
  latency::StepLatencyModel lat(sc.model, sc.tp, kv_dtype_of(st.config), sc.model.dtype, sc.gpu);
  // A profile without an interconnect (a user's) prices no communication, as before it had one.
  if ((sc.tp > 1 || sc.parallel.pp > 1) && sc.gpu.interconnect)
    lat.set_communication(latency::StepCommunication(sc.model, communication_of(sc, st), sc.gpu));
  engine::ServingOptions so;
  so.model = &sc.model;
  so.tp = sc.tp;
  so.forward = st.forward;
  so.sampler = st.sampler;
  so.eager = st.eager;
  so.graph_computes_logits = st.graph_computes_logits;
  so.max_graph_batch = st.graph_batch_sizes.empty() ? 0 : st.graph_batch_sizes.back();
  so.on_oom = sc.on_oom;
  so.check_invariants = options.check_invariants;
  so.release_on_oom = options.release_canary_on_oom ? st.memory.canary : nullptr;
  so.repeat_closed_runs = options.repeat_closed_runs;
  engine::Server server(*st.memory.allocator, *st.memory.slots, lat, *scheduler, so);
  std::unique_ptr<workload::RequestSource> source = workload::make_source(sc.workload);
  engine::ServingResult result = while_doing(fmt::format("simulating the workload of scenario '{}'", sc.name),
                                             [&] { return server.run(*source, on_request, options.on_progress); });
  if (result.canary_released_s) st.memory.canary = nullptr;
  return result;
}

}  // namespace headroom::scenario
