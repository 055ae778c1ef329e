#pragma once
// Serves `requests` identical requests on a vLLM scheduler to the end, the scheduler's invariants
// checked after every schedule and complete_step; returns its preemptions. The hybrid-pool tests
// (sliding window, chunked local attention) compare them with a full-attention pool's.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "sim/engine/vllm_scheduler.hpp"

namespace headroom::engine::test {

inline std::int64_t serve_uniform(const VllmSchedulerLimits& limits, int requests, Tokens prompt, Tokens output,
                                  int max_steps) {
  VllmScheduler sched(limits);
  RequestTable table;
  sched.attach(&table);
  for (int i = 0; i < requests; ++i) {
    RequestState r;
    r.id = table.size();
    r.prompt_tokens = prompt;
    r.max_output_tokens = output;
    table.push_back(r);
    sched.add_request(r.id);
  }
  StepPlan plan;
  std::vector<std::uint64_t> finished;
  Seconds now = 0;
  for (int step = 0; sched.has_work() && step < max_steps; ++step) {
    sched.schedule(now, plan);
    sched.check_invariants();
    now += 0.01;
    if (!plan.empty()) sched.complete_step(plan, now, finished);
    sched.check_invariants();
  }
  CHECK_FALSE(sched.has_work());
  return sched.counters().preemptions;
}

}  // namespace headroom::engine::test
