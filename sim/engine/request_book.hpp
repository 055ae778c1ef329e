#pragma once
// The per-request bookkeeping every scheduler keeps (vLLM, SGLang, LightLLM): the serving loop's
// request table it reads rows from, its own state per live request id (an IdWindow of Slot, so its
// memory follows the requests in flight), and the requests it refused outside schedule(), reported
// with the next plan.
#include <cstdint>
#include <vector>

#include "sim/engine/id_window.hpp"
#include "sim/engine/scheduler.hpp"

namespace headroom::engine {

template <class Slot>
class RequestBook : public Scheduler {
 public:
  void attach(RequestTable* table) final { table_ = table; }

 protected:
  RequestState& row(std::uint64_t id) const { return (*table_)[id]; }
  // The refused requests join the plan's `aborted`, in the order they were refused.
  void report_pending_aborts(StepPlan& plan) {
    for (std::uint64_t id : pending_aborts_) plan.aborted.push_back(id);
    pending_aborts_.clear();
  }

  RequestTable* table_ = nullptr;
  IdWindow<Slot> slots_;                       // by request id
  std::vector<std::uint64_t> pending_aborts_;  // refused outside schedule(), reported with the next plan
};

}  // namespace headroom::engine
