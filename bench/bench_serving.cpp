// Replays a whole scenario through start-up and serving and prints wall time, simulated time,
// steps, requests and allocator operations per second. Default: the full azure2023_conv trace
// (19,366 requests) on Llama-3.1-8B / H100 / vLLM with per-layer allocation programs
// (scenarios/vllm-azure-conv.yaml). A benchmark prints figures; it never passes or fails.
#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "sim/engine/scheduler_factory.hpp"
#include "sim/engine/server.hpp"
#include "sim/engine/startup.hpp"
#include "sim/latency/step_latency.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/make_source.hpp"

using namespace headroom;

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "scenarios/vllm-azure-conv.yaml";
  try {
    scenario::Scenario sc = scenario::load_scenario(path);
    engine::Deployment dep;
    dep.model = sc.model;
    dep.gpu = sc.gpu;
    dep.tp = sc.tp;
    dep.visible = sc.visible;
    dep.other_processes = sc.other_processes;
    dep.allocator = sc.allocator;
    auto t0 = std::chrono::steady_clock::now();
    engine::StartupResult st = engine::start_engine(dep, sc.engine);
    auto t1 = std::chrono::steady_clock::now();
    if (!st.ok) {
      fmt::print("start-up failed: {}\n", st.failure);
      return 1;
    }
    auto scheduler = engine::make_scheduler(st, sc.model);
    model::KvCacheDtype kv = model::KvCacheDtype::model;
    if (auto* v = std::get_if<engine::VllmConfig>(&st.config)) kv = v->kv_cache_dtype;
    latency::StepLatencyModel lat(sc.model, sc.tp, kv, sc.model.dtype, sc.gpu);
    engine::ServingOptions so;
    so.model = &sc.model;
    so.tp = sc.tp;
    so.forward = st.forward;
    so.sampler = st.sampler;
    so.max_graph_batch = st.graph_batch_sizes.empty() ? 0 : st.graph_batch_sizes.back();
    so.on_oom = sc.on_oom;
    engine::Server server(*st.memory.allocator, *st.memory.slots, lat, *scheduler, so);
    auto source = workload::make_source(sc.workload);
    const alloc::AllocatorStats& before = st.memory.allocator->stats();
    std::int64_t mallocs0 = before.allocation[alloc::kAll].allocated, frees0 = before.allocation[alloc::kAll].freed;
    auto t2 = std::chrono::steady_clock::now();
    engine::ServingResult r = server.run(*source, {});
    auto t3 = std::chrono::steady_clock::now();
    const alloc::AllocatorStats& after = st.memory.allocator->stats();
    std::int64_t mallocs = after.allocation[alloc::kAll].allocated - mallocs0;
    std::int64_t frees = after.allocation[alloc::kAll].freed - frees0;
    double serve_s = std::chrono::duration<double>(t3 - t2).count();
    fmt::print("scenario          {}\n", path);
    fmt::print("start-up          {:.3f} s wall\n", std::chrono::duration<double>(t1 - t0).count());
    fmt::print("serving           {:.3f} s wall for {:.1f} s simulated ({:.0f}x real time)\n", serve_s, r.end_time_s,
               r.end_time_s / serve_s);
    fmt::print("requests          {} completed of {} ({} OOM events)\n", r.completed, r.arrived, r.ooms.size());
    fmt::print("steps             {} ({} as CUDA graphs), {:.0f} steps/s\n", r.steps, r.graph_steps,
               static_cast<double>(r.steps) / serve_s);
    fmt::print("allocator         {} mallocs + {} frees, {:.1f} M operations/s\n", mallocs, frees,
               static_cast<double>(mallocs + frees) / serve_s / 1e6);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_serving: {}\n", e.what());
    return 2;
  }
  return 0;
}
