#include "sim/scenario/comparison.hpp"

#include <fmt/format.h>

#include "sim/core/parallel.hpp"
#include "sim/engine/startup.hpp"

namespace headroom::scenario {

std::vector<Outcome> compare_policies(const Scenario& sc, const std::vector<policy::PolicySpec>& policies,
                                      unsigned threads, Progress* progress) {
  for (const policy::PolicySpec& p : policies) policy::make_policy(p);  // bad parameters fail before any run
  std::vector<Outcome> out(policies.size());
  parallel_for(policies.size(), threads, [&](std::size_t i) {
    out[i] = simulate(sc, policies[i]);
    if (progress) progress->point_done();
  });
  return out;
}

namespace {

// PyTorch's figures of an OOM, as the comparison row shows them.
report::FirstOom first_oom_of(const alloc::OomInfo& oom, bool amd) {
  report::FirstOom f;
  f.tried = oom.alloc_size;
  f.free = oom.free;
  f.allocated = oom.allocated;
  f.reserved_unallocated = oom.reserved - oom.allocated;
  f.message = oom.message(amd);
  return f;
}

}  // namespace

report::ComparisonRow comparison_row(const Outcome& o, bool amd, const report::Slo& slo) {
  report::ComparisonRow r;
  r.judged = report::judge(o, slo);
  const engine::StartupResult& st = o.start.startup;
  r.label = o.label;
  r.kind = std::string(policy::policy_kind_name(o.spec.kind));
  r.started = st.ok;
  r.attempts = o.start.attempts;
  r.attempted_kv_tokens = o.start.attempted_kv_tokens;
  r.kv_tokens = st.kv_tokens;  // decided even when a later start-up step failed
  r.kv_budget = o.start.kv_budget;
  r.canary = st.bytes.canary;
  r.notes = o.start.notes;
  if (!st.ok) {
    r.failure = st.failure;
    r.failed_stage = std::string(engine::startup_stage_name(st.stage));
    if (st.oom) {
      report::FirstOom f = first_oom_of(*st.oom, amd);
      f.at_startup = true;
      f.stage = r.failed_stage;
      r.first_oom = f;
      r.ooms = 1;
    }
    r.verdict = st.oom ? fmt::format("start-up OOM at {}", r.failed_stage)
                       : fmt::format("start-up failed at {}", r.failed_stage);
    return r;
  }
  const engine::ServingResult& s = *o.serving;
  r.arrived = s.arrived;
  r.completed = s.completed;
  r.aborted = s.aborted;
  r.rejected = s.rejected;
  r.preemptions = s.preemptions;
  r.ttft = o.ttft;
  r.tpot = o.tpot;
  r.tokens_per_s = o.tokens_per_s;
  r.ooms = s.oom_count;
  if (s.canary_released_s) {
    r.canary_released = true;
    r.canary_released_s = *s.canary_released_s;
  }
  if (!s.ooms.empty()) {
    const engine::OomEvent& e = s.ooms.front();
    report::FirstOom f = first_oom_of(e.info, amd);
    f.stage = "serving";
    f.time_s = e.time_s;
    f.tensor = e.tensor;
    r.first_oom = f;
    r.verdict = fmt::format("OOM while serving at {:.1f} s ({})", e.time_s, e.tensor);
  } else {
    r.verdict = r.canary_released ? "no OOM: the canary absorbed one" : "no OOM";
    if (r.judged.overloaded == true) r.verdict += "; overloaded";
    else if (r.judged.slo_met == false) r.verdict += "; SLO missed";
  }
  return r;
}

}  // namespace headroom::scenario
