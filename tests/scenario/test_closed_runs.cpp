// The serving loop applies a step's closed run again instead of replaying it (engine::ServingOptions::
// repeat_closed_runs, model::RunMemo, alloc::ClosedRun). Whatever a run writes is the same with it
// off, where every step's program runs through the allocator: summary.json, the timeline, every
// request's record, and the allocator's statistics and memory map at the end.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/allocator/stats.hpp"
#include "sim/report/run_report.hpp"
#include "sim/scenario/outcome.hpp"
#include "sim/scenario/scenario.hpp"

using namespace headroom;

namespace {

struct Written {
  nlohmann::json summary;
  std::string timeline;
  std::vector<std::string> requests;
  nlohmann::json stats;
  std::vector<alloc::SnapshotSegment> segments;
  std::int64_t steps = 0;
  std::int64_t repeated = 0;
};

Written simulate(const scenario::Scenario& sc, const policy::PolicySpec& spec, bool repeat) {
  Written w;
  scenario::SimulateOptions opt;
  opt.keep_memory = true;
  opt.repeat_closed_runs = repeat;
  opt.on_request = [&](const engine::RequestRecord& r) {
    w.requests.push_back(fmt::format("{} {} {} {} {} {} {} {} {}", r.id, r.output_tokens, r.cached_tokens, r.preemptions,
                                     r.aborted, r.queue_s, r.ttft_s, r.tpot_s, r.e2e_s));
  };
  const scenario::Outcome o = scenario::simulate(sc, spec, opt);
  REQUIRE(o.started());
  REQUIRE(o.serving);
  const report::RunContext run{sc.name, "engine", sc.model.name, sc.gpu.name, sc.gpu.source, sc.gpu.capacity_bytes};
  w.summary = report::summary_json(run, o);
  std::ostringstream timeline;
  report::write_timeline_csv(timeline, o.start.startup, o.serving->timeline);
  w.timeline = timeline.str();
  const alloc::CachingAllocator& a = *o.start.startup.memory.allocator;
  w.stats = alloc::to_memory_stats_json(a.stats());
  w.segments = a.segments();
  w.steps = o.serving->steps;
  w.repeated = o.serving->repeated_steps;
  return w;
}

void same_outputs(const scenario::Scenario& sc, const policy::PolicySpec& spec) {
  const Written on = simulate(sc, spec, true), off = simulate(sc, spec, false);
  CHECK(off.repeated == 0);
  CHECK(on.summary == off.summary);
  CHECK(on.timeline == off.timeline);
  CHECK(on.requests == off.requests);
  CHECK(on.stats == off.stats);
  REQUIRE(on.segments.size() == off.segments.size());
  for (std::size_t i = 0; i < on.segments.size(); ++i) {
    const auto& x = on.segments[i];
    const auto& y = off.segments[i];
    REQUIRE(x.address == y.address);
    REQUIRE(x.blocks.size() == y.blocks.size());
    for (std::size_t j = 0; j < x.blocks.size(); ++j) {
      CHECK(x.blocks[j].address == y.blocks[j].address);
      CHECK(x.blocks[j].size == y.blocks[j].size);
      CHECK(x.blocks[j].requested_size == y.blocks[j].requested_size);
      CHECK(x.blocks[j].state == y.blocks[j].state);
    }
  }
}

scenario::Scenario parse(const std::string& text) { return scenario::parse_scenario(text, "closed-runs.yaml", "/tmp"); }

const char* kBursty =
    "workload: {synthetic: {requests: 300, arrivals: {process: gamma, rate: 30, cv: 3}, "
    "input: {dist: lognormal, mean: 2000, cv: 1, max: 12000}, output: {dist: lognormal, mean: 150, cv: 1, max: 800}}}\n";

}  // namespace

TEST_CASE("closed runs repeated: every engine's outputs are those of running every step") {
  for (const char* engine : {"vllm", "sglang", "lightllm"}) {
    INFO(engine);
    const scenario::Scenario sc = parse(std::string("name: closed-runs\ngpu: {profile: h100-sxm-80gb}\n"
                                                    "model: {name: Llama-3.1-8B}\nengine: {kind: ") +
                                        engine + "}\n" + kBursty);
    same_outputs(sc, sc.policy);
    // And most steps did repeat one (decode steps of an unchanged batch).
    const Written on = simulate(sc, sc.policy, true);
    CHECK(on.repeated > on.steps / 2);
  }
}

TEST_CASE("closed runs repeated: OOMs while serving, a canary released, and expandable segments") {
  // LightLLM's sampler spike (tests/cli/test_compare_tune.cpp, release_on_oom): the engine's run
  // fails steps and goes on (on_oom: continue), the canary policy frees its canary at the first OOM.
  const scenario::Scenario spike = parse(
      "name: spike\ngpu: {profile: h100-sxm-80gb}\nmodel: {name: Llama-3.1-8B}\n"
      "engine: {kind: lightllm, mem_fraction: 0.955}\non_oom: continue\n"
      "workload:\n  synthetic:\n    requests: 700\n    arrivals: {process: poisson, rate: 400}\n"
      "    input: {dist: fixed, value: 200}\n    output: {dist: fixed, value: 300}\n"
      "compare: [engine, {release_on_oom: {canary: 1536MiB}}]\n");
  REQUIRE(spike.compare.size() == 2);
  for (const policy::PolicySpec& spec : spike.compare) {
    INFO(policy::describe(spec));
    same_outputs(spike, spec);
  }
  CHECK(simulate(spike, spike.compare[0], true).summary["oom_count"].get<std::int64_t>() > 0);
  // Expandable segments: not the plain configuration, so no run is repeated (and the outputs agree).
  const scenario::Scenario expandable = parse(
      "name: expandable\ngpu: {profile: h100-sxm-80gb}\nmodel: {name: Llama-3.1-8B}\nengine: {kind: vllm}\n"
      "allocator: expandable_segments:True\n" + std::string(kBursty));
  same_outputs(expandable, expandable.policy);
  CHECK(simulate(expandable, expandable.policy, true).repeated == 0);
}
