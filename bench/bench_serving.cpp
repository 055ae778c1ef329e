// Replays a whole scenario through start-up and serving and prints wall time, simulated time,
// steps, requests and allocator operations per second. Default: the full azure2023_conv trace
// (19,366 requests) on Llama-3.1-8B / H100 / vLLM with per-layer allocation programs
// (scenarios/vllm-azure-conv.yaml). --run-every-step runs every step's program through the
// allocator, closed runs included (engine::ServingOptions::repeat_closed_runs off), for the
// allocator's own rate on the whole trace. A benchmark prints figures; it never passes or fails.
#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"

using namespace headroom;

int main(int argc, char** argv) {
  std::string path = "scenarios/vllm-azure-conv.yaml";
  scenario::ServeOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--run-every-step") options.repeat_closed_runs = false;
    else if (arg.starts_with("-")) {
      fmt::print(stderr, "bench_serving: unknown option '{}' (usage: bench_serving [SCENARIO] [--run-every-step])\n", arg);
      return 2;
    } else path = arg;
  }
  try {
    scenario::Scenario sc = scenario::load_scenario(path);
    auto t0 = std::chrono::steady_clock::now();
    engine::StartupResult st = scenario::start(sc);
    auto t1 = std::chrono::steady_clock::now();
    if (!st.ok) {
      fmt::print("start-up failed: {}\n", st.failure);
      return 1;
    }
    const alloc::AllocatorStats& before = st.memory.allocator->stats();
    std::int64_t mallocs0 = before.allocation[alloc::kAll].allocated, frees0 = before.allocation[alloc::kAll].freed;
    auto t2 = std::chrono::steady_clock::now();
    engine::ServingResult r = scenario::serve(sc, st, {}, options);
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
    fmt::print("steps             {} ({} as CUDA graphs, {} repeating a closed run), {:.0f} steps/s\n", r.steps,
               r.graph_steps, r.repeated_steps, static_cast<double>(r.steps) / serve_s);
    fmt::print("allocator         {} mallocs + {} frees, {:.1f} M operations/s\n", mallocs, frees,
               static_cast<double>(mallocs + frees) / serve_s / 1e6);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_serving: {}\n", e.what());
    return 2;
  }
  return 0;
}
