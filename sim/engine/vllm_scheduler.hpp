#pragma once
// vLLM v1's scheduler (docs/serving-memory-model.md §1.4; vllm/v1/core/sched/scheduler.py
// Scheduler.schedule and update_from_output, vllm/v1/core/sched/utils.py check_stop) over its
// paged KV cache (paged_kv_cache.hpp). Per step, with token_budget = max_num_batched_tokens:
//  1. RUNNING requests in order: new = min(num_tokens − computed, long_prefill_token_threshold,
//     budget) (1 for a decode); allocate_slots for exactly the blocks needed. When it fails,
//     preempt by recompute: the newest running request (running.pop()) frees its blocks (hashes
//     kept), forgets its computed tokens and goes to the FRONT of the waiting queue; retry until
//     the allocation succeeds or the victim is the request itself (which then stops the loop).
//  2. WAITING requests, in queue order, only if nothing was preempted this step: while running <
//     max_num_seqs and budget is left, look up the prefix cache, new = min(num_tokens − hit,
//     threshold, budget) (chunked prefill), allocate; the first failure stops admission.
// There is no watermark: "free" includes evictable cached blocks (§1.4).
//
// Requests vLLM would never serve are aborted on arrival (status aborted, never queued, reported
// in the next plan's `aborted`): an empty prompt or one of max_model_len tokens or more
// (input_processor.py _validate_prompt_len), and one whose KV could never fit in the pool, on
// which vLLM would preempt itself and resume forever (start-up's one-request check, §1.2, rules
// this out except for the null block and num_gpu_blocks_override). A request stops when it has its
// trace's output count or when prompt + outputs reach max_model_len (check_stop,
// FINISHED_LENGTH_CAPPED).
//
// A steady decode batch (the last plan decoded every running request and none finished) is planned
// from the last plan, each context a token on; only a request crossing a block boundary asks the KV
// cache (same plans, same allocate_slots calls and preemptions as the loop above).
//
// Allocation-free once warm: the queues keep their capacity; the KV cache is sized at construction.
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "sim/engine/engine_config.hpp"
#include "sim/engine/paged_kv_cache.hpp"
#include "sim/engine/request_book.hpp"

namespace headroom::engine {

// The resolved limits (VllmConfig after resolve(), num_blocks from start-up).
struct VllmSchedulerLimits {
  std::int64_t max_num_batched_tokens = 0;
  std::int64_t max_num_seqs = 0;
  Tokens block_size = 16;
  std::uint32_t num_blocks = 0;  // block 0 is the null block (§1.2)
  bool enable_prefix_caching = true;
  // SchedulerConfig.long_prefill_token_threshold: caps one request's tokens per step; absent or 0
  // is off (vLLM's default without partial-prefill limits).
  std::optional<Tokens> long_prefill_token_threshold;
  Tokens max_model_len = 0;
  // The KV cache groups (vllm_kv_cache_groups.hpp): 0 for full attention, else the group's sliding
  // window; one full-attention group for a uniform model.
  std::vector<Tokens> group_windows = {0};
  // The non-full groups are chunked local attention (Llama 4): their windows are attention chunks.
  bool chunked_local = false;
};

// The limits from a resolved VllmConfig (resolve() filled every optional) and the block count
// start-up decided (StartupResult::kv_blocks). Throws std::logic_error for an unresolved config and
// InputError for a block count beyond 32 bits (a num_gpu_blocks_override nobody can allocate).
VllmSchedulerLimits vllm_scheduler_limits(const VllmConfig& resolved, std::int64_t num_blocks);

// Its state per request id (RequestBook): whether add_request has seen the request.
class VllmScheduler final : public RequestBook<std::uint8_t> {
 public:
  // Throws InputError naming the limit when one is below 1 (num_blocks below 2, a negative threshold).
  explicit VllmScheduler(const VllmSchedulerLimits& limits);

  // The row must exist in the table with status waiting; see above for the requests aborted here.
  void add_request(std::uint64_t id) override;
  void schedule(Seconds now, StepPlan& plan) override;
  void complete_step(const StepPlan& plan, Seconds now, std::vector<std::uint64_t>& finished) override;
  void drop_step(const StepPlan& plan) override;
  void release(std::uint64_t id) override;
  bool has_work() const override { return !running_.empty() || !waiting_.empty() || !pending_aborts_.empty(); }
  std::int64_t running() const override { return static_cast<std::int64_t>(running_.size()); }
  std::int64_t waiting() const override { return static_cast<std::int64_t>(waiting_.size()); }
  // capacity (num_blocks − 1) × block_size; used: distinct blocks held by running requests; cached:
  // free blocks that still carry a hash (evictable), all in tokens, divided by the number of KV
  // cache groups (vLLM's "GPU KV cache size" is num_blocks // groups × block_size).
  KvUsage kv_usage() const override;
  const SchedulerCounters& counters() const override { return counters_; }
  // Throws std::logic_error naming the first broken invariant: the cache's own (PagedKvCache::
  // check_invariants); KV never over-committed (distinct held blocks ≤ num_blocks − 1); each
  // running request's table in every group has exactly the blocks its computed tokens (plus those
  // of a step in flight) need, a sliding-window group none wholly before its window, waiting ones
  // none; the last plan within the token budget, max_num_seqs and the long
  // prefill threshold, decodes first; every added request's status matching the queue it sits in.
  void check_invariants() const override;

  const VllmSchedulerLimits& limits() const { return limits_; }
  const PagedKvCache& kv_cache() const { return cache_; }
  // The queues in order (running: oldest admission first; waiting: next to admit first). Allocates:
  // for tests and reports.
  std::vector<std::uint64_t> running_queue() const { return running_; }
  std::vector<std::uint64_t> waiting_queue() const;

 private:
  // Request ids in a ring buffer (vLLM's waiting deque: prepend for preempted requests).
  class IdRing {
   public:
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    std::uint64_t front() const { return buf_[head_]; }
    std::uint64_t operator[](std::size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }
    void push_back(std::uint64_t id);
    void push_front(std::uint64_t id);
    void pop_front();

   private:
    void grow();
    std::vector<std::uint64_t> buf_;  // power-of-two size
    std::size_t head_ = 0, size_ = 0;
  };

  RequestState& row(std::uint64_t id) const;  // RequestBook::row, checked
  KvRequest kv_view(const RequestState& r) const;
  void preempt(std::uint64_t id, StepPlan& plan);
  // Slots for a running request's next tokens, preempting the newest running requests until they
  // fit; false when the request itself was preempted.
  bool allocate_or_preempt(const KvRequest& kv, std::uint64_t id, Tokens n, StepPlan& plan);
  void add_to_plan(const RequestState& r, Tokens new_tokens, StepPlan& plan);
  bool stops(const RequestState& r) const;
  Tokens most_blocks(Tokens tokens) const;  // blocks a request of `tokens` tokens may hold at once
  void remove_from_running(RequestStatus status);

  VllmSchedulerLimits limits_;
  PagedKvCache cache_;
  std::vector<std::uint64_t> running_;
  IdRing waiting_;
  SchedulerCounters counters_;

  std::vector<ScheduledRequest> prefills_;  // scratch: prefills wait here so decodes lead the plan
  // The last plan, for check_invariants and to match complete_step/drop_step against.
  std::vector<ScheduledRequest> last_;
  Tokens last_total_tokens_ = 0;
  bool step_in_flight_ = false;
  // The last plan, completed, was all decodes of every running request, none of which finished
  // (complete_step): the next plan starts from it (schedule's steady path).
  bool steady_ = false;
  // Per running request, in running_'s order: PagedKvCache::decode_fit_limit when the steady path
  // made the last plan (fit_known_), so a steady decode asks the cache only at a block boundary.
  std::vector<Tokens> fit_;
  bool fit_known_ = false;
};

}  // namespace headroom::engine
