// The closest call of a replay (engine::ClosestCall, summary.json's `headroom`): the lowest free
// device memory while serving, exact (every malloc compared, not the down-sampled timeline), the step
// and the allocation that set it, and the distance to the engine's budget then.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/run_report.hpp"
#include "sim/scenario/outcome.hpp"
#include "sim/scenario/scenario.hpp"

using namespace headroom;

namespace {

// A few hundred steps: the timeline keeps every one (under max_timeline_points), so its points can
// be checked against the exact figure.
scenario::Scenario closest_call_scenario(const std::string& engine) {
  return scenario::parse_scenario(
      "name: closest-call\n"
      "gpu: {profile: h100-sxm-80gb}\n"
      "model: {name: Llama-3.1-8B}\n"
      "engine: {kind: " + engine + "}\n"
      "workload: {synthetic: {requests: 120, arrivals: {process: gamma, rate: 20, cv: 3}, "
      "input: {dist: lognormal, mean: 3000, cv: 1, max: 16000}, output: {dist: lognormal, mean: 100, cv: 1, max: 512}}}\n",
      "closest-call.yaml", "/tmp");
}

}  // namespace

TEST_CASE("the closest call is the lowest free memory of every step, named by its step and allocation") {
  // SGLang's start-up leaves no cached activation segment (its profile is arithmetic), so its first
  // prefill takes new segments from the device; vLLM's profile run leaves them cached and serving
  // never takes more: its closest call is the state start-up left.
  for (const char* engine : {"sglang", "vllm"}) {
    INFO(engine);
    const scenario::Scenario sc = closest_call_scenario(engine);
    const scenario::Outcome o = scenario::simulate(sc, sc.policy);
    REQUIRE(o.serving);
    const engine::ServingResult& r = *o.serving;
    const engine::ClosestCall& c = r.closest_call;
    REQUIRE(static_cast<std::int64_t>(r.timeline.size()) == r.steps);  // every step kept
    Bytes lowest = c.min_free + 1;
    for (const engine::TimelinePoint& p : r.timeline) {
      lowest = std::min(lowest, p.device_free);
      CHECK(p.free_or_cached >= p.device_free);  // the cache only adds
    }
    // Every step's lowest is at or above the closest call, and one step reaches it.
    CHECK(lowest == c.min_free);
    const engine::StartupResult& st = o.start.startup;
    // One process on the device: free + non-torch + reserved is the capacity (every segment a whole
    // number of 2 MiB pages).
    CHECK(c.min_free + st.bytes.non_torch + c.reserved == sc.gpu.capacity_bytes);
    if (std::string(engine) == "sglang") {
      REQUIRE(c.step >= 0);
      CHECK(c.step < r.steps);
      CHECK(c.min_free < st.bytes.device_free);
      CHECK(c.bytes > 0);
      // The first layer's MLP, where the forward's live bytes peak (gate_up and act together,
      // serving-memory-model.md §4a): act is the allocation that needs a new segment.
      CHECK(c.allocation() == "act (layer 0)");
      CHECK(c.time_s >= 0);
      CHECK(c.time_s <= r.end_time_s);
    } else {
      CHECK(c.step == -1);
      CHECK(c.min_free == st.bytes.device_free);
      CHECK(c.allocation().empty());
    }

    const report::RunContext run{sc.name, engine, sc.model.name, sc.gpu.name, sc.gpu.source, sc.gpu.capacity_bytes};
    const nlohmann::json h = report::summary_json(run, o)["headroom"];
    CHECK(h["min_free_bytes"] == c.min_free);
    CHECK(h["reserved_bytes"] == c.reserved);
    const report::MemoryBudget budget = report::engine_memory_budget(st, sc.gpu.capacity_bytes);
    CHECK(h["budget_left_bytes"].get<std::int64_t>() ==
          static_cast<std::int64_t>(budget.bytes) - static_cast<std::int64_t>(st.bytes.non_torch + c.reserved));
    if (c.step >= 0) {
      CHECK(h["step"] == c.step);
      CHECK(h["at_s"] == c.time_s);
      CHECK(h["allocation"] == c.allocation());
      CHECK(h["allocation_bytes"] == c.bytes);
    } else {
      CHECK(h["step"].is_null());
      CHECK(h["at_s"].is_null());
      CHECK(h["allocation"].is_null());
      CHECK(h["allocation_bytes"].is_null());
    }
  }
}

TEST_CASE("the headroom line names the figure, the step, the allocation and the budget's distance") {
  const nlohmann::json named = {{"min_free_bytes", 1536ull << 20}, {"at_s", 12.3456}, {"step", 678},
                                {"allocation", "logits"}, {"allocation_bytes", 1ull << 30},
                                {"reserved_bytes", 70ull << 30}, {"budget_left_bytes", -(512ll << 20)}};
  CHECK(report::headroom_line(named) ==
        "1.50 GiB free on the device at the lowest, at 12.346 s (step 678, allocating logits of 1.00 GiB); the "
        "process then 512.00 MiB over the memory budget");
  const nlohmann::json startup = {{"min_free_bytes", 8ull << 30}, {"at_s", nullptr}, {"step", nullptr},
                                  {"allocation", nullptr}, {"allocation_bytes", nullptr},
                                  {"reserved_bytes", 70ull << 30}, {"budget_left_bytes", nullptr}};
  CHECK(report::headroom_line(startup) ==
        "8.00 GiB free on the device at the lowest, as start-up left it (no step took more from the device)");
}
