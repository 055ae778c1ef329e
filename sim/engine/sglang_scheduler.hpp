#pragma once
// SGLang's scheduler (docs/serving-memory-model.md §2.3–§2.4; SGLang python/sglang/srt/managers/
// scheduler.py, schedule_policy.py PrefillAdder, schedule_batch.py retract_decode), over the radix
// KV cache (radix_kv_cache.hpp).
//
// A step is either a prefill (extend) batch or a decode batch: Scheduler.get_next_batch_to_run
// first asks get_new_batch_prefill for a batch of waiting requests and runs it when there is one;
// only otherwise does update_running_batch decode every running request.
//
// Prefill (PrefillAdder, FCFS — the default schedule_policy of current releases): the chunked
// request goes first, then waiting requests in queue order, stopping at the first that does not
// fit. Each is matched against the radix tree (its cached prefix is locked) and costs extend_input_len +
// min(max_new_tokens, 4096) out of rem_total = available + evictable − Σ_running
// min(max_new − generated, 4096) × new_token_ratio (a retracted request is checked against the
// outputs it still has to make, as newer releases do); a batch also stops at max_prefill_tokens input
// tokens, chunked_prefill_size tokens (a longer prompt is cut and goes on next step as the chunked
// request) and max_running_requests. A budget exhausted by tokens sets batch_is_full, which holds
// off prefill until a running request leaves.
//
// Decode: one slot per running request. If short, the radix cache is evicted; still short →
// retract_decode: requests sorted by (#outputs, −#inputs) descending are popped from the end until
// the rest fit (at least one); the retracted free their KV (their prompt stays cached in the tree)
// and go to the back of the waiting queue to be prefilled again; new_token_ratio becomes
// min(1, (Σ outputs + 20 × #left) / (Σ max_new_tokens + 1)). A last request that still does not fit
// is aborted. Otherwise new_token_ratio decays linearly towards its minimum; it returns to its
// initial value whenever the scheduler finds nothing to run.
//
// KV of a request: the prefix it locks in the tree plus the slots it holds outside it. After every
// prefill step its computed tokens are inserted into the tree and locked (cache_unfinished_req);
// at the end all of them are inserted and unlocked (cache_finished_req).
//
// SWA pool (gpt-oss and Llama 4, §2.2; swa_capacity > 0), pinned to sgl-project/sglang main @
// 99fab2ce6 (2026-02-03, a build of which calls itself 0.5.8): every new token takes a slot in each
// pool (SwaRadixKvCache); admission counts the smaller of the two pools' free + evictable slots;
// decode needs a slot in each; every window-th decode step a request's SWA slots of tokens before
// its length less the window go back (_evict_swa; with the ChunkCache also at each prefill chunk).
// With the radix cache the tree is SWARadixCache (swa_radix_kv_cache.hpp): eviction asks for the
// shortfall of each pool, a request SWA-locks only the window of its prefix, and a finished
// request's tokens whose SWA slots are gone join the tree as a tombstone.
//
// disable_radix_cache (ChunkCache): no prefix match; a request keeps its slots outside any tree
// and frees them all when it ends.
//
// Not modelled: the cache-aware policies (lpm, dfs-weight; older releases defaulted to lpm),
// --enable-mixed-chunk, the overlap scheduler, priority scheduling, page_size above 1, speculative
// decoding. The chunked request's next piece is limited by the token budget as well as by
// chunked_prefill_size (newer add_chunked_req; older releases took the chunk regardless).
#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/engine/engine_config.hpp"
#include "sim/engine/radix_kv_cache.hpp"
#include "sim/engine/swa_radix_kv_cache.hpp"
#include "sim/engine/request_book.hpp"

namespace headroom::engine {

// SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION default (schedule_policy.py CLIP_MAX_NEW_TOKENS, §2.4).
inline constexpr Tokens kSglangClipMaxNewTokens = 4096;
// SGLANG_RETRACT_DECODE_STEPS default (environ.py; global_config.retract_decode_steps, §2.4).
inline constexpr Tokens kSglangRetractDecodeSteps = 20;
// SGLANG_INIT_NEW_TOKEN_RATIO, SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR, SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
// defaults (environ.py / global_config.py, §2.4).
inline constexpr double kSglangInitNewTokenRatio = 0.7;
inline constexpr double kSglangMinNewTokenRatioFactor = 0.14;
inline constexpr double kSglangNewTokenRatioDecaySteps = 600;

// The scheduler's limits, resolved at start-up.
struct SglangSchedulerLimits {
  Tokens kv_capacity = 0;                   // max_total_num_tokens (§2.2)
  int page_size = 1;
  std::int64_t chunked_prefill_size = 8192;  // <= 0: chunked prefill off
  std::int64_t max_prefill_tokens = 16384;
  std::int64_t max_running_requests = 0;    // §2.3, decided at start-up
  std::int64_t context_length = 0;
  double schedule_conservativeness = 1.0;
  bool disable_radix_cache = false;  // ChunkCache: no prefix reuse, a request's KV freed when it ends
  // SGLang's SWA KV pool (§2.2): the SWA pool's tokens (0: no SWA pool, kv_capacity covers every
  // layer) and SGLang's sliding_window_size (SglangFigures). kv_capacity is then the full pool's size.
  Tokens swa_capacity = 0;
  Tokens sliding_window = 0;
};

// The limits from a resolved SglangConfig (resolve() filled every optional) and what start-up
// decided: the KV pool size and max_running_requests (SglangFigures). Throws std::logic_error for
// an unresolved config.
SglangSchedulerLimits sglang_scheduler_limits(const SglangConfig& resolved, Tokens kv_capacity,
                                              std::int64_t max_running_requests);
// ... with the SWA pool start-up sized (SglangFigures swa_tokens and sliding_window; 0: none).
SglangSchedulerLimits sglang_scheduler_limits(const SglangConfig& resolved, Tokens kv_capacity,
                                              std::int64_t max_running_requests, Tokens swa_capacity,
                                              Tokens sliding_window);

// The new_token_ratio schedule (§2.4): init = min(0.7 × schedule_conservativeness, 1), floor =
// init × 0.14, decay = (init − floor) / 600 per decode step.
struct SglangNewTokenRatio {
  double init = 0;
  double min = 0;
  double decay = 0;
};
SglangNewTokenRatio sglang_new_token_ratio(double schedule_conservativeness);

// Why SGLang gave up on a request.
enum class SglangAbort : std::uint8_t {
  none,
  // input + max_new_tokens >= context_length: the tokenizer manager rejects it
  // ("Requested token count exceeds the model's maximum context length", tokenizer_manager.py).
  context_length,
  // input >= max_req_input_len = min(context_length − 1, pool − 1) − 5: Scheduler
  // validate_input_length aborts it ("Input length ... exceeds the maximum allowed length").
  input_too_long,
  // retract_decode: the last decode request does not fit even alone ("Out of memory even after
  // retracting all other requests in the decode batch. Aborting the last request.").
  decode_out_of_memory,
  // the step it was in failed (an OOM the server survives with on_oom: continue).
  dropped_step,
};
std::string_view sglang_abort_name(SglangAbort reason);

// SglangScheduler's state per request id.
struct SglangSlot {
  RadixKvCache::NodeId node = RadixKvCache::kRoot;  // locked tree node (root: none)
  Tokens locked = 0;   // tokens of the locked path: prefix KV the request reads from the tree
  Tokens own = 0;      // slots held outside the tree
  Tokens pending = 0;  // of those, allocated for the step in flight
  // SWA pool (§2.2): slots held, swa_evicted_seqlen (tokens before it hold none, once raised to
  // the locked prefix), decode_batch_idx (decode steps since the request was last admitted) and
  // the SWARadixCache lock's swa_uuid_for_lock.
  Tokens swa_own = 0;
  Tokens swa_evicted = 0;
  std::uint64_t swa_uuid = 0;
  std::int64_t decode_steps = 0;
  SglangAbort abort = SglangAbort::none;
  bool known = false;
  bool admitted_before = false;
};

class SglangScheduler final : public RequestBook<SglangSlot> {
 public:
  // Throws InputError for limits SGLang would refuse to start with (pool below 7 tokens, context
  // or max_running_requests below 1, max_prefill_tokens below 1, a conservativeness <= 0) or that
  // the model does not cover (page_size other than 1: the radix cache here works per token).
  explicit SglangScheduler(const SglangSchedulerLimits& limits);

  // Checks the request against the context and input limits (aborting it, reported with the next
  // plan) and caps its max_output_tokens at max_req_len − input − 1 as Scheduler
  // handle_generate_request caps max_new_tokens.
  void add_request(std::uint64_t id) override;
  void schedule(Seconds now, StepPlan& plan) override;
  void complete_step(const StepPlan& plan, Seconds now, std::vector<std::uint64_t>& finished) override;
  // The dropped step's requests are aborted (SglangAbort::dropped_step) and their KV freed, the
  // prefix they computed before the step staying cached.
  void drop_step(const StepPlan& plan) override;
  void release(std::uint64_t id) override;
  bool has_work() const override;
  std::int64_t running() const override;  // the decode batch plus the chunked request
  std::int64_t waiting() const override;
  KvUsage kv_usage() const override;
  const SchedulerCounters& counters() const override { return counters_; }
  void check_invariants() const override;

  // Introspection (tests, reports).
  const SglangSchedulerLimits& limits() const { return limits_; }
  Tokens max_req_len() const { return max_req_len_; }
  Tokens max_req_input_len() const { return max_req_len_ - 5; }
  double new_token_ratio() const { return new_token_ratio_; }
  const SglangNewTokenRatio& new_token_ratio_schedule() const { return ratio_; }
  bool batch_is_full() const { return batch_is_full_; }
  const RadixKvCache& cache() const { return cache_; }  // without an SWA pool (empty with one)
  // The SWA pool (§2.2): slots held by requests (outside the tree), and free.
  Tokens swa_used() const { return swa_ ? swa_->request_swa_tokens() : 0; }
  Tokens swa_available() const { return swa_ ? swa_->swa_available() : 0; }
  Tokens swa_slots_of(std::uint64_t id) const;
  // Both pools and the SWARadixCache (hybrid SWA only; std::logic_error otherwise).
  const SwaRadixKvCache& swa_cache() const;
  SglangAbort abort_reason(std::uint64_t id) const;
  // The decode batch in its order, the waiting queue in its order, the chunked request (or -1).
  const std::vector<std::uint64_t>& running_batch() const { return running_; }
  const std::deque<std::uint64_t>& waiting_queue() const { return waiting_; }
  std::int64_t chunked_request() const { return has_chunked_ ? static_cast<std::int64_t>(chunked_) : -1; }

 private:
  using Slot = SglangSlot;
  enum class AddResult { proceed, no_token, other };
  class PrefillAdder;  // one prefill batch's budgets (sglang_scheduler.cpp)

  KvRequest kv_request(const RequestState& r) const;
  Slot& slot(std::uint64_t id) { return slots_[id]; }
  const Slot& slot(std::uint64_t id) const { return slots_[id]; }

  bool schedule_prefill(Seconds now, StepPlan& plan);
  void schedule_decode(StepPlan& plan);
  bool check_decode_mem(Tokens slots_needed);
  void evict_for(Tokens slots_needed);
  void retract_decode(StepPlan& plan);
  bool hybrid_swa() const { return limits_.swa_capacity > 0; }
  Tokens available_for_alloc() const;                  // min of the pools' free slots (SWA allocator)
  double available_and_evictable() const;              // PrefillAdder.rem_total_tokens before offsets
  RadixKvCache::Match match_prefix(const KvRequest& k);  // the tree in use; a ChunkCache matches nothing
  std::uint64_t lock_node(RadixKvCache::NodeId node);  // inc_lock_ref; the SWA lock's swa_uuid
  void unlock_node(RadixKvCache::NodeId node, std::uint64_t swa_uuid);
  bool alloc_slots(Slot& s, Tokens n);                 // n slots in each pool
  void evict_swa(Slot& s, Tokens pre_len);             // ScheduleBatch._evict_swa
  void free_kv(std::uint64_t id);                     // frees the request's KV, keeps the tree's
  void cache_unfinished(std::uint64_t id);            // insert computed tokens, relock
  void cache_finished(std::uint64_t id);              // insert computed tokens, unlock
  void abort(std::uint64_t id, SglangAbort reason);   // status aborted, reported with a plan
  void leave_running(std::uint64_t id);

  SglangSchedulerLimits limits_;
  SglangNewTokenRatio ratio_;
  Tokens max_req_len_ = 0;
  RadixKvCache cache_;                    // the pool and tree without an SWA pool
  std::optional<SwaRadixKvCache> swa_;    // both pools and the tree with one
  std::deque<std::uint64_t> waiting_;
  std::vector<std::uint64_t> running_;     // the decode batch, in SGLang's order
  std::uint64_t chunked_ = 0;
  bool has_chunked_ = false;
  std::int64_t prefill_in_flight_ = 0;  // prefill requests of the step in flight that finish their prefill
  bool batch_is_full_ = false;
  double new_token_ratio_ = 0;
  // Scratch reused every step (no allocation once warm).
  std::vector<std::uint64_t> admitted_;
  std::vector<Tokens> admitted_tokens_;
  std::vector<std::uint64_t> order_;
  SchedulerCounters counters_;
};

}  // namespace headroom::engine
