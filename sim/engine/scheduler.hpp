#pragma once
// The scheduler of one engine: admits waiting requests, builds each step's batch within the engine's
// limits, owns the KV cache manager, and preempts (vLLM) or retracts (SGLang) when KV runs out. The
// serving loop (server.hpp) owns the request table and the clock; a scheduler only sees requests
// through the table and the plans it makes.
#include <cstdint>
#include <vector>

#include "sim/engine/request_state.hpp"
#include "sim/engine/step_plan.hpp"

namespace headroom::engine {

struct KvUsage {
  Tokens capacity_tokens = 0;   // KV slots the engine sized at start-up
  Tokens used_tokens = 0;       // held by running requests
  Tokens cached_tokens = 0;     // free but holding reusable prefix KV (evictable)
};

struct SchedulerCounters {
  std::int64_t preemptions = 0;       // vLLM preempt-by-recompute, SGLang retract
  std::int64_t prefix_hit_tokens = 0; // prompt tokens served from the prefix cache
  std::int64_t prefix_query_tokens = 0;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // The request table is owned by the serving loop; ids index it. Rows may move when a request
  // arrives (keep ids, not references), and a reported request's row goes away (release()).
  virtual void attach(RequestTable* table) = 0;
  // A request arrived: it joins the waiting queue.
  virtual void add_request(std::uint64_t id) = 0;
  // Plans the next step at `now` (KV for every scheduled token is allocated here; requests may be
  // preempted). An empty plan means nothing can run now.
  virtual void schedule(Seconds now, StepPlan& plan) = 0;
  // The step's kernels finished at `now`: advance computed and generated tokens, record first-token
  // and finish times, free finished requests' KV (caching prefixes). Finished ids are appended to
  // `finished`.
  virtual void complete_step(const StepPlan& plan, Seconds now, std::vector<std::uint64_t>& finished) = 0;
  // The step failed (an OOM the server survives with on_oom: continue): undo its KV allocations'
  // effects as the engine would (the batch is dropped and its requests rescheduled).
  virtual void drop_step(const StepPlan& plan) = 0;
  // The serving loop has reported the request (finished, or aborted through a plan's `aborted` or
  // a dropped step) and will drop its row: the scheduler forgets whatever it keeps by its id, so
  // its memory follows the live requests. Only for a request in no queue and holding no KV.
  virtual void release(std::uint64_t id) = 0;
  virtual bool has_work() const = 0;
  virtual std::int64_t running() const = 0;
  virtual std::int64_t waiting() const = 0;
  virtual KvUsage kv_usage() const = 0;
  virtual const SchedulerCounters& counters() const = 0;
  // Throws std::logic_error naming the first broken invariant (KV never over-committed, every
  // running request's KV accounted, queues consistent with the table).
  virtual void check_invariants() const = 0;
};

}  // namespace headroom::engine
