#pragma once
// LightLLM's scheduler (docs/serving-memory-model.md §3; ModelTC/LightLLM lightllm/server/router/
// req_queue/chunked_prefill/impl.py, router/batch.py and core/objs/req.py, model_infer/mode_backend/
// base_backend.py and chunked_prefill/control_state.py), over the token pool (token_kv_pool.hpp).
//
// Two halves, as in LightLLM:
//  - The router admits waiting requests in queue order into the running batch, stopping at the
//    first that does not fit. A request fits when the worst-case future peak of the batch with it,
//        max_i (left_i × i + Σ_{j≤i} used_j) + frozen  <  max_total_token_num
//    over the requests sorted by left (tokens they may still add) descending, where used_j is what
//    request j holds or will hold once prefilled; when the batch reaches
//    running_max_req_size requests; and when the new requests' first prefill tokens (plus one
//    decode token per running request) stay within batch_max_tokens. `frozen` (KV held for a PD
//    transfer) is 0 here: disaggregated serving is not modelled.
//  - The inference backend runs, each step, either a prefill batch (requests with prompt left, at
//    most chunked_prefill_size tokens each and batch_max_tokens in all) or, when there is none, a
//    decode batch (LightLLM's default aggressive schedule). A request whose tokens do not fit in the
//    free pool is paused (at most 2 per step): its KV is freed and it is prefilled again after
//    recovery, which is tried every 100 steps in batch order while the whole sequence fits.
//
// The router's estimate of a request's output is its max_new_tokens when the server is busy
// (used / max_total ≥ router_token_ratio — always, with the default ratio 0), else
// min(max_new_tokens, max(1.1 × outputs so far, router_max_new_token_len)). With the default the
// estimate is exact, and without chunked prefill admission alone keeps the pool from running out.
// The bound assumes every admitted request decodes from the next decode step on, though: a prompt
// prefilled in chunks starts later, outlives its estimate, and the pool can still run short
// (LightLLM's newer ChunkedPrefillReq pads `left` for the chunks' delay; not modelled here). A
// ratio above 0 admits more and pauses more.
#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "sim/engine/engine_config.hpp"
#include "sim/engine/request_book.hpp"
#include "sim/engine/token_kv_pool.hpp"

namespace headroom::engine {

// lightllm/server/api_cli.py defaults: --router_token_ratio 0.0, --router_max_new_token_len 1024.
inline constexpr double kLightllmRouterTokenRatio = 0.0;
inline constexpr Tokens kLightllmRouterMaxNewTokenLen = 1024;
// base_backend.py _get_classed_reqs: pause_max_req_num = 2 requests per step.
inline constexpr int kLightllmPauseMaxReqNum = 2;
// chunked_prefill/control_state.py try_recover_paused_reqs: every 100 steps.
inline constexpr std::int64_t kLightllmRecoverInterval = 100;

struct LightllmSchedulerLimits {
  Tokens kv_capacity = 0;                     // max_total_token_num (§3)
  std::int64_t running_max_req_size = 1000;
  std::int64_t batch_max_tokens = 8448;
  std::int64_t max_req_total_len = 16384;
  std::int64_t chunked_prefill_size = 4096;
  bool chunked_prefill = true;                // --disable_chunked_prefill turns it off
  double router_token_ratio = kLightllmRouterTokenRatio;
  Tokens router_max_new_token_len = kLightllmRouterMaxNewTokenLen;
};

// The limits from a resolved LightllmConfig and the KV pool start-up decided. Throws
// std::logic_error for an unresolved config.
LightllmSchedulerLimits lightllm_scheduler_limits(const LightllmConfig& resolved, Tokens kv_capacity);

// One request as the router counts it (req.py NormalReq.get_tuple_tokens).
struct LightllmTokenTuple {
  Tokens used = 0;  // KV it holds, or will hold once its prompt is in
  Tokens left = 0;  // tokens it may still add
};
// max_i (left_i × i + Σ_{j≤i} used_j), i from 1, over the tuples sorted by left descending
// (ChunkedPrefillQueue._can_add_new_req); 0 for none. Sorts `tuples` in place.
Tokens lightllm_worst_case_peak(std::vector<LightllmTokenTuple>& tuples);

enum class LightllmAbort : std::uint8_t {
  none,
  // input + max_new_tokens > max_req_total_len: the HTTP server rejects it ("the req total len
  // (input len + output len) is too long > max_req_total_len", httpserver/manager.py).
  max_req_total_len,
  // input + max_new_tokens + 1 > max_total_token_num: rejected likewise ("the req token total len
  // + 1 (input len + output len + 1) is too long > max_total_token_num").
  exceeds_kv_pool,
  // the step it was in failed (an OOM the server survives with on_oom: continue).
  dropped_step,
};
std::string_view lightllm_abort_name(LightllmAbort reason);

// LightllmScheduler's state per request id.
struct LightllmSlot {
  Tokens pending = 0;  // tokens allocated for the step in flight
  LightllmAbort abort = LightllmAbort::none;
  bool known = false;
  bool paused = false;
};

class LightllmScheduler final : public RequestBook<LightllmSlot> {
 public:
  // Throws InputError for limits LightLLM cannot serve with: a pool, running_max_req_size,
  // max_req_total_len or batch_max_tokens below 1, a chunk size below 1, batch_max_tokens below
  // the chunk (with chunked prefill; no chunk would ever fit) or below max_req_total_len
  // (without; api_start.py requires it), a negative router_token_ratio.
  explicit LightllmScheduler(const LightllmSchedulerLimits& limits);

  void add_request(std::uint64_t id) override;
  void schedule(Seconds now, StepPlan& plan) override;
  void complete_step(const StepPlan& plan, Seconds now, std::vector<std::uint64_t>& finished) override;
  // The dropped step's requests are aborted (LightllmAbort::dropped_step) and their KV freed.
  void drop_step(const StepPlan& plan) override;
  void release(std::uint64_t id) override;
  bool has_work() const override;
  std::int64_t running() const override;  // in the running batch and not paused
  std::int64_t waiting() const override;  // in the waiting queue or paused
  KvUsage kv_usage() const override;
  const SchedulerCounters& counters() const override { return counters_; }
  void check_invariants() const override;

  // Introspection (tests, reports).
  const LightllmSchedulerLimits& limits() const { return limits_; }
  const TokenKvPool& pool() const { return pool_; }
  LightllmAbort abort_reason(std::uint64_t id) const;
  bool paused(std::uint64_t id) const { return slots_.contains(id) && !slots_.dropped(id) && slots_[id].paused; }
  std::int64_t step_count() const { return step_count_; }
  const std::vector<std::uint64_t>& running_batch() const { return running_; }  // paused ones included
  const std::deque<std::uint64_t>& waiting_queue() const { return waiting_; }
  // The router's tuple for a request now (busy: whether the exact max_new_tokens is used).
  LightllmTokenTuple token_tuple(std::uint64_t id, bool busy) const;
  bool is_busy() const;

 private:
  using Slot = LightllmSlot;

  Tokens held(std::uint64_t id) const { return pool_.tokens_of(id); }
  void admit();                                      // the router's generate_new_batch
  bool classify(StepPlan& plan, bool recover);       // the backend's step; false: nothing to run
  void pause(std::uint64_t id, StepPlan& plan);
  std::int64_t recover(Tokens can_alloc);            // returns how many came back
  void free_kv(std::uint64_t id);

  LightllmSchedulerLimits limits_;
  TokenKvPool pool_;
  std::deque<std::uint64_t> waiting_;
  std::vector<std::uint64_t> running_;      // the router's running batch, in admission order
  std::int64_t paused_count_ = 0;
  std::int64_t step_count_ = 0;             // ControlState.step_count
  std::int64_t last_recovered_ = 0;
  // Scratch reused every step.
  std::vector<LightllmTokenTuple> tuples_;
  std::vector<std::uint64_t> prefill_, decode_, wait_pause_;
  std::vector<Tokens> prefill_tokens_;
  SchedulerCounters counters_;
};

}  // namespace headroom::engine
