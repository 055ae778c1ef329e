#pragma once
// The request table, a scheduler and a fake clock the SGLang and LightLLM scheduler tests drive:
// each step takes 10 ms, and the invariants are checked after every scheduler call.
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "sim/engine/request_state.hpp"
#include "sim/engine/step_plan.hpp"

namespace headroom::engine::test {

template <class Scheduler>
struct SchedulerHarness {
  RequestTable table;
  std::deque<std::vector<std::uint64_t>> hashes;
  Scheduler sched;
  StepPlan plan;
  std::vector<std::uint64_t> finished;
  std::vector<std::uint64_t> aborted;  // reported through plans
  Seconds now = 0;
  std::int64_t steps = 0;

  template <class Limits>
  explicit SchedulerHarness(const Limits& l) : sched(l) {
    sched.attach(&table);
  }

  // `h`: Mooncake-style hashes of the prompt's 512-token blocks (none: no prefix to share).
  std::uint64_t add(Tokens prompt, Tokens output, std::vector<std::uint64_t> h = {}) {
    const std::uint64_t id = table.size();
    hashes.push_back(std::move(h));
    RequestState r;
    r.id = id;
    r.arrival_s = now;
    r.prompt_tokens = prompt;
    r.max_output_tokens = output;
    r.prefix_hashes = hashes.back();
    r.prefix_block_tokens = hashes.back().empty() ? 0 : 512;
    table.push_back(r);
    sched.add_request(id);
    return id;
  }
  // Plans a step and runs it to completion; the plan stays readable until the next step.
  const StepPlan& step() {
    plan.clear();
    sched.schedule(now, plan);
    sched.check_invariants();
    aborted.insert(aborted.end(), plan.aborted.begin(), plan.aborted.end());
    finished.clear();
    if (!plan.empty()) {
      now += 0.01;
      ++steps;
      sched.complete_step(plan, now, finished);
      sched.check_invariants();
    }
    return plan;
  }
  bool is_prefill() const { return !plan.empty() && !plan.scheduled.front().is_decode; }
  const RequestState& r(std::uint64_t id) const { return table[id]; }
};

}  // namespace headroom::engine::test
