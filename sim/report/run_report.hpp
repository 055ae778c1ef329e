#pragma once
// What `headroom run` writes: summary.json (the verdict's figures), timeline.csv (memory by category
// and load over time, down-sampled), requests.csv (one row per finished request, streamed as they
// finish). Field names are documented in docs/run.md.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/text_writer.hpp"
#include "sim/engine/server.hpp"
#include "sim/engine/startup_result.hpp"
#include "sim/report/latency_histogram.hpp"
#include "sim/report/outcome.hpp"
#include "sim/report/percentiles.hpp"

namespace headroom::report {

// Latency distributions over finished requests, collected as they leave, in fixed memory.
struct LatencyCollector {
  LatencyHistogram ttft, tpot, e2e, queue;
  void add(const engine::RequestRecord& r);
  // A histogram's figures with its CDF at up to kCdfPoints ranks.
  static Distribution summarize(const LatencyHistogram& h);
};

// What a run was, besides its outcome: the scenario, engine, model and GPU that summary.json and
// the verdict name.
struct RunContext {
  std::string scenario;
  std::string engine;
  std::string model;
  std::string gpu;
  std::string gpu_source;  // datasheet | measured
  Bytes capacity = 0;      // device memory this process sees
};

nlohmann::json summary_json(const RunContext& run, const Outcome& outcome);

// The share of the device the engine was told it may use, as a budget line for the memory chart:
// vLLM gpu_memory_utilization, SGLang mem_fraction_static (as start-up used it, after its heuristic),
// LightLLM mem_fraction; each times the device's capacity. `rule` says which.
struct MemoryBudget {
  Bytes bytes = 0;
  std::string rule;  // e.g. "gpu_memory_utilization 0.9 × capacity"
};
MemoryBudget engine_memory_budget(const engine::StartupResult& startup, Bytes capacity);

// summary.json's `headroom`: the replay's closest call (engine::ClosestCall) with the distance to the
// engine's budget then (budget − non-torch − reserved; negative when over it, null without a budget).
nlohmann::json headroom_json(const engine::ClosestCall& closest, Bytes non_torch, const MemoryBudget& budget);
// The report's and the terminal's one line from summary.json's `headroom`: "6.10 GiB free on the
// device at the lowest, at 12.345 s (step 678, allocating logits of 1.00 GiB); 1.20 GiB under the
// engine's budget". Throws nlohmann's errors on a malformed object (the caller names the file).
std::string headroom_line(const nlohmann::json& headroom);

// One sentence: "vLLM on h100-sxm-80gb serves all 19,366 requests without an OOM" / "... dies at
// 1,203.4 s: CUDA out of memory ...".
std::string verdict(const RunContext& run, const Outcome& outcome);

// requests.csv, a row per request as it leaves: formatted into the writer's buffer (no string per
// row); a latency the request never reached (-1) is an empty cell.
void write_request_header(TextWriter& out);
void write_request_row(TextWriter& out, const engine::RequestRecord& r);

// Memory by category at each timeline point: weights, KV pool, workspaces, graph pool and request
// pool are fixed after start-up; activations are the step's own peak; cached-free is reserved minus
// allocated.
void write_timeline_csv(TextWriter& out, const engine::StartupResult& startup,
                        const std::vector<engine::TimelinePoint>& timeline);
void write_timeline_csv(std::ostream& out, const engine::StartupResult& startup,
                        const std::vector<engine::TimelinePoint>& timeline);

}  // namespace headroom::report
