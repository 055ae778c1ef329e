#include "sim/engine/sglang_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/engine/queue_membership.hpp"

namespace headroom::engine {

namespace {

[[noreturn]] void broken(const std::string& what) { throw std::logic_error("SglangScheduler: " + what); }

SglangSchedulerLimits checked(const SglangSchedulerLimits& l) {
  if (l.page_size != 1)
    throw InputError(fmt::format("sglang page_size {}: only page_size 1 is modelled (the radix cache here holds "
                                 "single-token pages)",
                                 l.page_size));
  if (l.kv_capacity < 1)
    throw InputError(fmt::format("sglang KV pool: expected at least 1 token, got {}", l.kv_capacity));
  if (l.context_length < 1)
    throw InputError(fmt::format("sglang context_length: expected at least 1, got {}", l.context_length));
  if (l.max_running_requests < 1)
    throw InputError(fmt::format("sglang max_running_requests: expected at least 1, got {}", l.max_running_requests));
  if (l.max_prefill_tokens < 1)
    throw InputError(fmt::format("sglang max_prefill_tokens: expected at least 1, got {}", l.max_prefill_tokens));
  if (l.swa_capacity < 0 || (l.swa_capacity > 0 && l.sliding_window < 1))
    throw InputError(fmt::format("sglang SWA pool: expected a pool of at least 1 token and a window of at least 1, "
                                 "got {} tokens and a window of {}",
                                 l.swa_capacity, l.sliding_window));
  if (!(l.schedule_conservativeness > 0))
    throw InputError(
        fmt::format("sglang schedule_conservativeness: expected a value above 0, got {}", l.schedule_conservativeness));
  // TpModelWorker: max_req_len = min(context_len − 1, pool − 1), max_req_input_len = max_req_len − 5,
  // both asserted positive ("Memory pool size is too small").
  const Tokens max_req_len = std::min<Tokens>(l.context_length - 1, l.kv_capacity - 1);
  if (max_req_len - 5 <= 0)
    throw InputError(fmt::format("sglang: memory pool size is too small: max_req_input_len = min(context_length {} - 1, "
                                 "KV pool {} - 1) - 5 must be above 0",
                                 l.context_length, l.kv_capacity));
  return l;
}

}  // namespace

std::string_view sglang_abort_name(SglangAbort reason) {
  switch (reason) {
    case SglangAbort::none: return "none";
    case SglangAbort::context_length: return "context length exceeded";
    case SglangAbort::input_too_long: return "input too long";
    case SglangAbort::decode_out_of_memory: return "decode out of memory";
    case SglangAbort::dropped_step: return "dropped step";
  }
  return "?";
}

SglangNewTokenRatio sglang_new_token_ratio(double schedule_conservativeness) {
  SglangNewTokenRatio r;
  r.init = std::min(kSglangInitNewTokenRatio * schedule_conservativeness, 1.0);
  r.min = std::min(r.init * kSglangMinNewTokenRatioFactor, 1.0);
  r.decay = (r.init - r.min) / kSglangNewTokenRatioDecaySteps;
  return r;
}

SglangSchedulerLimits sglang_scheduler_limits(const SglangConfig& c, Tokens kv_capacity,
                                              std::int64_t max_running_requests) {
  if (!c.chunked_prefill_size || !c.context_length)
    throw std::logic_error("sglang_scheduler_limits: the SglangConfig is not resolved (call resolve() first)");
  SglangSchedulerLimits l;
  l.kv_capacity = kv_capacity;
  l.page_size = c.page_size;
  l.chunked_prefill_size = *c.chunked_prefill_size;
  l.max_prefill_tokens = c.max_prefill_tokens;
  l.max_running_requests = max_running_requests;
  l.context_length = *c.context_length;
  l.schedule_conservativeness = c.schedule_conservativeness;
  l.disable_radix_cache = c.disable_radix_cache;
  return l;
}

SglangSchedulerLimits sglang_scheduler_limits(const SglangConfig& c, Tokens kv_capacity,
                                              std::int64_t max_running_requests, Tokens swa_capacity,
                                              Tokens sliding_window) {
  SglangSchedulerLimits l = sglang_scheduler_limits(c, kv_capacity, max_running_requests);
  l.swa_capacity = swa_capacity;
  l.sliding_window = swa_capacity > 0 ? sliding_window : 0;
  return l;
}

SglangScheduler::SglangScheduler(const SglangSchedulerLimits& limits)
    : limits_(checked(limits)),
      ratio_(sglang_new_token_ratio(limits.schedule_conservativeness)),
      max_req_len_(std::min<Tokens>(limits.context_length - 1, limits.kv_capacity - 1)),
      cache_(limits.kv_capacity) {
  if (hybrid_swa()) swa_.emplace(limits.kv_capacity, limits.swa_capacity, limits.sliding_window);
  new_token_ratio_ = ratio_.init;
}

KvRequest SglangScheduler::kv_request(const RequestState& r) const {
  KvRequest k;
  k.id = r.id;
  k.prompt_tokens = r.prompt_tokens;
  k.num_tokens = r.prompt_tokens + r.output_tokens;
  k.num_computed_tokens = r.computed_tokens;
  k.prefix_hashes = r.prefix_hashes;
  k.prefix_block_tokens = r.prefix_block_tokens;
  return k;
}

SglangAbort SglangScheduler::abort_reason(std::uint64_t id) const {
  return slots_.contains(id) && !slots_.dropped(id) ? slots_[id].abort : SglangAbort::none;
}

void SglangScheduler::abort(std::uint64_t id, SglangAbort reason) {
  RequestState& r = row(id);
  r.status = RequestStatus::aborted;
  slot(id).abort = reason;
}

void SglangScheduler::add_request(std::uint64_t id) {
  if (!table_) broken("add_request before attach");
  if (!table_->contains(id)) broken(fmt::format("request {} is not in the table", id));
  if (slots_.dropped(id)) broken(fmt::format("request {} added after its release", id));
  slots_.extend_to(id);
  Slot& s = slot(id);
  if (s.known) broken(fmt::format("request {} added twice", id));
  s = Slot{};
  s.known = true;
  RequestState& r = row(id);
  // TokenizerManager._validate_one_request: input + max_new_tokens must stay below the context.
  if (r.prompt_tokens + r.max_output_tokens >= limits_.context_length) {
    abort(id, SglangAbort::context_length);
    pending_aborts_.push_back(id);
    return;
  }
  // Scheduler validate_input_length.
  if (r.prompt_tokens >= max_req_input_len()) {
    abort(id, SglangAbort::input_too_long);
    pending_aborts_.push_back(id);
    return;
  }
  // Scheduler.handle_generate_request: max_new_tokens = min(max_new_tokens, max_req_len − input − 1).
  r.max_output_tokens = std::min<Tokens>(r.max_output_tokens, max_req_len_ - r.prompt_tokens - 1);
  r.status = RequestStatus::waiting;
  waiting_.push_back(id);
}

void SglangScheduler::evict_for(Tokens slots_needed) {
  // evict_from_tree_cache (mem_cache/common.py): evict only the shortfall; a ChunkCache has no tree.
  if (hybrid_swa()) {
    if (limits_.disable_radix_cache) return;
    // The SWA allocator: each pool's shortfall, evict(full, swa) (@99fab2ce6).
    const Tokens full = swa_->full_available(), swa = swa_->swa_available();
    if (full < slots_needed || swa < slots_needed)
      swa_->evict(std::max<Tokens>(0, slots_needed - full), std::max<Tokens>(0, slots_needed - swa));
    return;
  }
  const Tokens available = cache_.available_size();
  if (available < slots_needed) cache_.evict(slots_needed - available);
}

Tokens SglangScheduler::available_for_alloc() const {
  // SWATokenToKVPoolAllocator.available_size: the smaller of the two pools' free slots (§2.2).
  return hybrid_swa() ? swa_->available_size() : cache_.available_size();
}

double SglangScheduler::available_and_evictable() const {
  // PrefillAdder.rem_total_tokens (schedule_policy.py @99fab2ce6): with the SWA pool the smaller of
  // each pool's free + evictable slots (a ChunkCache has none evictable).
  if (hybrid_swa())
    return static_cast<double>(std::min(swa_->full_available() + swa_->full_evictable_size(),
                                        swa_->swa_available() + swa_->swa_evictable_size()));
  return static_cast<double>(cache_.available_size() + cache_.evictable_size());
}

RadixKvCache::Match SglangScheduler::match_prefix(const KvRequest& k) {
  // Req.init_next_round_input: the first input_len − 1 tokens; a ChunkCache matches nothing.
  if (limits_.disable_radix_cache) return {};
  if (hybrid_swa()) {
    const SwaRadixKvCache::Match m = swa_->match_prefix(k, k.num_tokens - 1);
    return {m.tokens, m.node};
  }
  return cache_.match_prefix(k);
}

std::uint64_t SglangScheduler::lock_node(RadixKvCache::NodeId node) {
  if (hybrid_swa()) return swa_->inc_lock_ref(node).swa_uuid;
  cache_.inc_lock_ref(node);
  return 0;
}

void SglangScheduler::unlock_node(RadixKvCache::NodeId node, std::uint64_t swa_uuid) {
  if (hybrid_swa()) swa_->dec_lock_ref({node, swa_uuid});
  else cache_.dec_lock_ref(node);
}

bool SglangScheduler::alloc_slots(Slot& s, Tokens n) {
  if (hybrid_swa()) {
    if (!swa_->alloc(n)) return false;
    s.swa_own += n;
  } else if (!cache_.alloc(n)) {
    return false;
  }
  s.own += n;
  return true;
}

bool SglangScheduler::check_decode_mem(Tokens slots_needed) {
  evict_for(slots_needed);
  return available_for_alloc() >= slots_needed;
}

void SglangScheduler::evict_swa(Slot& s, Tokens pre_len) {
  // ScheduleBatch._evict_swa (schedule_batch.py @99fab2ce6): the SWA slots of the request's own
  // tokens (from its locked prefix on: the tree frees the prefix's) before pre_len − window go back.
  s.swa_evicted = std::max(s.swa_evicted, s.locked);
  const Tokens target = std::max(s.swa_evicted, pre_len - limits_.sliding_window);
  if (target <= s.swa_evicted) return;
  const Tokens freed = target - s.swa_evicted;
  if (freed > s.swa_own) broken(fmt::format("SWA eviction of {} slots from a request holding {}", freed, s.swa_own));
  s.swa_own -= freed;
  swa_->free_swa(freed);
  s.swa_evicted = target;
}

const SwaRadixKvCache& SglangScheduler::swa_cache() const {
  if (!swa_) broken("swa_cache() without an SWA pool");
  return *swa_;
}

Tokens SglangScheduler::swa_slots_of(std::uint64_t id) const {
  return slots_.contains(id) && !slots_.dropped(id) ? slots_[id].swa_own : 0;
}

void SglangScheduler::schedule(Seconds now, StepPlan& plan) {
  if (!table_) broken("schedule before attach");
  report_pending_aborts(plan);
  // Scheduler.get_next_batch_to_run: a prefill batch when one can be formed, else a decode batch.
  if (!schedule_prefill(now, plan)) schedule_decode(plan);
  // Nothing to run: the event loop's idle branch re-initialises new_token_ratio.
  if (plan.empty()) new_token_ratio_ = ratio_.init;
}

// schedule_policy.py PrefillAdder: the budgets of one prefill batch, and the requests it admits
// into the scheduler's admitted_ / admitted_tokens_ (their prefix locked, their state running).
class SglangScheduler::PrefillAdder {
 public:
  explicit PrefillAdder(SglangScheduler& s)
      : s_(s), chunking_(s.limits_.chunked_prefill_size > 0), rem_input_(s.limits_.max_prefill_tokens),
        rem_chunk_(chunking_ ? s.limits_.chunked_prefill_size : 0) {
    for (std::uint64_t id : s_.running_) {  // rem_total_token_offset: the running requests' outputs to come
      const RequestState& r = s_.row(id);
      total_offset_ += static_cast<double>(std::min(r.max_output_tokens - r.output_tokens, kSglangClipMaxNewTokens)) *
                       s_.new_token_ratio_;
    }
    s_.admitted_.clear();
    s_.admitted_tokens_.clear();
  }

  // Requests add_one_req took from the head of the waiting queue.
  std::size_t taken() const { return taken_; }

  // add_chunked_req: the next chunk of the request cut last step, at most what the budget leaves.
  void add_chunked_req() {
    const RequestState& r = s_.row(s_.chunked_);
    const Tokens extend = r.remaining_prefill();
    const double total = rem_total();
    const Tokens limit = std::min<Tokens>(rem_chunk_, total > 0 ? static_cast<Tokens>(std::floor(total)) : 0);
    if (limit <= 0) return;
    const bool truncated = extend > limit;
    const Tokens n = std::min(extend, limit);
    s_.admitted_.push_back(s_.chunked_);
    s_.admitted_tokens_.push_back(n);
    update_budget(n, truncated ? 0 : std::min(r.max_output_tokens, kSglangClipMaxNewTokens));
    if (!truncated) s_.has_chunked_ = false;  // its last chunk: an ordinary prefill from here on
  }

  // add_one_req: the next waiting request, if it fits; anything but `proceed` ends the batch
  // (`no_token`: the token budget is spent, so the batch is full).
  AddResult add_one_req(std::uint64_t id) {
    RequestState& r = s_.row(id);
    const KvRequest k = s_.kv_request(r);
    // Req.init_next_round_input; a ChunkCache matches nothing.
    const RadixKvCache::Match m = s_.match_prefix(k);
    const Tokens extend = r.prompt_tokens + r.output_tokens - m.tokens;
    // The check counts the outputs still to come (PrefillAdder.add_one_req since mid-2025:
    // min(max(max_new − generated, 0), clip)), the reservation the request's max_new_tokens. For a
    // request never retracted the two are equal; counting a retracted request's full max_new on
    // top of the outputs it re-prefills (older releases) can leave it unable ever to fit.
    const Tokens max_new = std::min(r.max_output_tokens, kSglangClipMaxNewTokens);
    const Tokens total = extend + std::min(r.max_output_tokens - r.output_tokens, kSglangClipMaxNewTokens);
    if (static_cast<double>(total) >= rem_total()) return AddResult::no_token;
    if (extend > rem_input_ && !s_.admitted_.empty()) return AddResult::other;
    const std::uint64_t swa_uuid = s_.lock_node(m.node);  // locking the prefix takes it out of the evictable budget
    if (static_cast<double>(total) > rem_total()) {
      s_.unlock_node(m.node, swa_uuid);
      return AddResult::no_token;
    }
    Tokens n = extend;
    if (!chunking_ || extend <= rem_chunk_) {
      update_budget(extend, max_new);
    } else {
      if (rem_chunk_ <= 0) {
        s_.unlock_node(m.node, swa_uuid);
        return AddResult::other;
      }
      if (s_.has_chunked_) broken("a second request would be cut while one is still chunked");
      n = rem_chunk_;
      update_budget(n, 0);
      s_.chunked_ = id;
      s_.has_chunked_ = true;
    }
    Slot& sl = s_.slot(id);
    sl.node = m.node;
    sl.swa_uuid = swa_uuid;
    sl.locked = m.tokens;
    r.computed_tokens = m.tokens;
    r.status = RequestStatus::running;
    if (!sl.admitted_before) {
      sl.admitted_before = true;
      r.cached_tokens = m.tokens;
    }
    s_.counters_.prefix_query_tokens += k.num_tokens;
    s_.counters_.prefix_hit_tokens += m.tokens;
    s_.admitted_.push_back(id);
    s_.admitted_tokens_.push_back(n);
    ++taken_;
    return budget_state();
  }

 private:
  // rem_total_tokens: free and evictable KV less what the batch and the running requests reserve.
  double rem_total() const { return s_.available_and_evictable() - total_offset_; }
  // _update_prefill_budget.
  void update_budget(Tokens extend, Tokens max_new) {
    total_offset_ += static_cast<double>(extend + max_new);
    rem_input_ -= extend;
    if (chunking_) rem_chunk_ -= extend;
  }
  AddResult budget_state() const {
    if (rem_total() <= 0) return AddResult::no_token;
    if (rem_input_ <= 0 || (chunking_ && rem_chunk_ <= 0)) return AddResult::other;
    return AddResult::proceed;
  }

  SglangScheduler& s_;
  const bool chunking_;
  Tokens rem_input_;
  Tokens rem_chunk_;
  double total_offset_ = 0;  // rem_total_token_offset
  std::size_t taken_ = 0;
};

bool SglangScheduler::schedule_prefill(Seconds now, StepPlan& plan) {
  // Scheduler.get_new_batch_prefill.
  if ((batch_is_full_ || waiting_.empty()) && !has_chunked_) return false;
  const std::int64_t running_bs = static_cast<std::int64_t>(running_.size());
  if (running_bs >= limits_.max_running_requests) {
    batch_is_full_ = true;
    return false;
  }
  PrefillAdder adder(*this);
  if (has_chunked_) adder.add_chunked_req();
  // Waiting requests in queue order (FCFS), stopping at the first that does not fit.
  for (std::uint64_t id : waiting_) {
    if (running_bs + static_cast<std::int64_t>(admitted_.size()) >= limits_.max_running_requests) {
      batch_is_full_ = true;
      break;
    }
    const AddResult result = adder.add_one_req(id);
    if (result != AddResult::proceed) {
      if (result == AddResult::no_token) batch_is_full_ = true;
      break;
    }
  }
  for (std::size_t i = 0; i < adder.taken(); ++i) waiting_.pop_front();
  if (admitted_.empty()) return false;

  // ScheduleBatch.prepare_for_extend: one allocation for the batch, evicting the shortfall first.
  Tokens need = 0;
  for (Tokens n : admitted_tokens_) need += n;
  evict_for(need);
  // maybe_evict_swa (extend, ChunkCache only): each request's SWA slots before its prefix less the
  // window go back first.
  if (hybrid_swa() && limits_.disable_radix_cache)
    for (std::uint64_t id : admitted_) evict_swa(slot(id), row(id).computed_tokens);
  for (std::size_t i = 0; i < admitted_.size(); ++i) {
    const std::uint64_t id = admitted_[i];
    const Tokens n = admitted_tokens_[i];
    Slot& s = slot(id);
    if (!alloc_slots(s, n))
      broken(fmt::format("prefill out of memory: {} tokens for request {} with {} available", n, id,
                         available_for_alloc()));
    s.pending = n;
    RequestState& r = row(id);
    if (r.first_scheduled_s < 0) r.first_scheduled_s = now;
    const bool samples = n == r.remaining_prefill();
    if (samples) ++prefill_in_flight_;
    plan.add({.id = id, .new_tokens = n, .context_tokens = r.computed_tokens, .is_decode = false, .samples = samples});
  }
  return true;
}

void SglangScheduler::schedule_decode(StepPlan& plan) {
  // Scheduler.update_running_batch.
  if (running_.empty()) return;
  if (!check_decode_mem(static_cast<Tokens>(running_.size()))) {
    retract_decode(plan);
  } else {
    new_token_ratio_ = std::max(new_token_ratio_ - ratio_.decay, ratio_.min);
  }
  // prepare_for_decode → maybe_evict_swa: every window decode steps (decode_batch_idx % window
  // == 1), the SWA slots that left the window go back.
  if (hybrid_swa())
    for (std::uint64_t id : running_) {
      Slot& s = slot(id);
      if (s.decode_steps % limits_.sliding_window == 1) evict_swa(s, row(id).computed_tokens);
    }
  for (std::uint64_t id : running_) {
    Slot& s = slot(id);
    if (!alloc_slots(s, 1))
      broken(fmt::format("decode out of memory for request {} after check_decode_mem passed", id));
    ++s.decode_steps;
    s.pending = 1;
    const RequestState& r = row(id);
    plan.add({.id = id, .new_tokens = 1, .context_tokens = r.computed_tokens, .is_decode = true, .samples = true});
  }
}

void SglangScheduler::free_kv(std::uint64_t id) {
  // release_kv_cache(req, tree_cache, is_insert=False): the request's own slots go back to the
  // pool, its prefix path is unlocked (and stays cached).
  Slot& s = slot(id);
  if (hybrid_swa()) swa_->free(s.own, s.swa_own);
  else cache_.free(s.own);
  unlock_node(s.node, s.swa_uuid);
  s.own = 0;
  s.pending = 0;
  s.node = RadixKvCache::kRoot;
  s.swa_uuid = 0;
  s.locked = 0;
  s.swa_own = 0;
  s.swa_evicted = 0;
  s.decode_steps = 0;
}

void SglangScheduler::retract_decode(StepPlan& plan) {
  // ScheduleBatch.retract_decode: (#outputs, −#inputs) descending, a stable sort as Python's.
  order_.assign(running_.begin(), running_.end());
  std::stable_sort(order_.begin(), order_.end(), [&](std::uint64_t a, std::uint64_t b) {
    const RequestState& x = row(a);
    const RequestState& y = row(b);
    if (x.output_tokens != y.output_tokens) return x.output_tokens > y.output_tokens;
    return x.prompt_tokens < y.prompt_tokens;
  });
  const std::size_t first_retracted = plan.preempted.size();
  bool first_iter = true;
  while (first_iter || !check_decode_mem(static_cast<Tokens>(order_.size()))) {
    if (order_.size() == 1) break;  // always keep one request
    first_iter = false;
    const std::uint64_t id = order_.back();
    order_.pop_back();
    free_kv(id);
    RequestState& r = row(id);
    r.status = RequestStatus::preempted;
    r.computed_tokens = 0;
    ++r.preemptions;
    ++counters_.preemptions;
    plan.preempted.push_back(id);
    // release_req: "use the newly evictable memory instantly".
    evict_for(static_cast<Tokens>(order_.size()) * kSglangRetractDecodeSteps);
  }
  if (order_.size() <= 1 && !check_decode_mem(static_cast<Tokens>(order_.size()))) {
    const std::uint64_t id = order_.back();
    order_.pop_back();
    free_kv(id);
    abort(id, SglangAbort::decode_out_of_memory);
    plan.aborted.push_back(id);
  }
  running_.assign(order_.begin(), order_.end());  // filter_batch(keep_indices=sorted_indices)
  batch_is_full_ = false;
  // Scheduler._extend_requests_to_queue: the retracted go to the back of the waiting queue.
  for (std::size_t i = first_retracted; i < plan.preempted.size(); ++i) waiting_.push_back(plan.preempted[i]);

  Tokens decoded = 0, max_new = 0;
  for (std::uint64_t id : running_) {
    decoded += row(id).output_tokens;
    max_new += row(id).max_output_tokens;
  }
  new_token_ratio_ = std::min(
      1.0, static_cast<double>(decoded + kSglangRetractDecodeSteps * static_cast<Tokens>(running_.size())) /
               static_cast<double>(max_new + 1));
}

void SglangScheduler::cache_unfinished(std::uint64_t id) {
  // RadixCache.cache_unfinished_req: the computed tokens join the tree (duplicates go back to
  // the pool) and the request re-locks the longer path.
  RequestState& r = row(id);
  Slot& s = slot(id);
  if (s.own != r.computed_tokens - s.locked)
    broken(fmt::format("request {} holds {} slots outside the tree, expected {}", id, s.own,
                       r.computed_tokens - s.locked));
  if (limits_.disable_radix_cache) return;  // ChunkCache.cache_unfinished_req: the request keeps its KV
  if (hybrid_swa()) {
    // SWARadixCache.cache_unfinished_req: insert (no swa_evicted_seqlen: a prefilling request has
    // freed no SWA slots), match the tokens again, and move the lock to the node found; the
    // request SWA-locked the window before its prefix's end, so the match finds them all.
    const KvRequest k = kv_request(r);
    if (s.swa_evicted > s.locked) broken(fmt::format("request {} freed SWA slots before its prefill ended", id));
    swa_->insert(k, r.computed_tokens, s.locked, 0);
    const SwaRadixKvCache::Match m = swa_->match_prefix(k, r.computed_tokens);
    if (m.tokens != r.computed_tokens)
      broken(fmt::format("request {} finds {} of its {} inserted tokens", id, m.tokens, r.computed_tokens));
    unlock_node(s.node, s.swa_uuid);
    s.swa_uuid = lock_node(m.node);
    s.node = m.node;
    s.locked = r.computed_tokens;
    s.own = 0;
    s.swa_own = 0;
    return;
  }
  const RadixKvCache::Insertion ins = cache_.insert(kv_request(r), r.computed_tokens, s.locked);
  cache_.inc_lock_ref(ins.node);
  cache_.dec_lock_ref(s.node);
  s.node = ins.node;
  s.locked = r.computed_tokens;
  s.own = 0;
}

void SglangScheduler::cache_finished(std::uint64_t id) {
  // RadixCache.cache_finished_req: everything with KV joins the tree, unlocked.
  RequestState& r = row(id);
  Slot& s = slot(id);
  if (s.own != r.computed_tokens - s.locked)
    broken(fmt::format("request {} holds {} slots outside the tree, expected {}", id, s.own,
                       r.computed_tokens - s.locked));
  if (limits_.disable_radix_cache) {  // ChunkCache.cache_finished_req: every slot back to the pools
    free_kv(id);
    return;
  }
  if (hybrid_swa()) {
    // SWARadixCache.cache_finished_req: the tokens whose SWA slots _evict_swa freed join as a tombstone.
    swa_->insert(kv_request(r), r.computed_tokens, s.locked, s.swa_evicted);
    swa_->dec_lock_ref({s.node, s.swa_uuid});
    s.swa_own = 0;
    s.swa_evicted = 0;
    s.swa_uuid = 0;
    s.decode_steps = 0;
  } else {
    cache_.insert(kv_request(r), r.computed_tokens, s.locked);
    cache_.dec_lock_ref(s.node);
  }
  s.node = RadixKvCache::kRoot;
  s.locked = 0;
  s.own = 0;
}

void SglangScheduler::leave_running(std::uint64_t id) {
  std::erase(running_, id);
  if (has_chunked_ && chunked_ == id) has_chunked_ = false;
  batch_is_full_ = false;  // the batch shrank: prefill may be tried again
}

void SglangScheduler::complete_step(const StepPlan& plan, Seconds now, std::vector<std::uint64_t>& finished) {
  prefill_in_flight_ = 0;
  bool any_left = false;
  for (const ScheduledRequest& sr : plan.scheduled) {
    RequestState& r = row(sr.id);
    Slot& s = slot(sr.id);
    if (r.status != RequestStatus::running)
      broken(fmt::format("request {} completed a step while not running", sr.id));
    if (s.pending != sr.new_tokens)
      broken(fmt::format("request {} completed {} tokens but {} were allocated", sr.id, sr.new_tokens, s.pending));
    r.computed_tokens += sr.new_tokens;
    s.pending = 0;
    if (!sr.samples) {  // a chunk of a long prompt
      cache_unfinished(sr.id);
      continue;
    }
    ++r.output_tokens;
    if (r.first_token_s < 0) r.first_token_s = now;
    if (r.done()) {
      cache_finished(sr.id);
      r.status = RequestStatus::finished;
      r.finish_s = now;
      finished.push_back(sr.id);
      any_left = true;
      continue;
    }
    if (!sr.is_decode) {
      // process_batch_result_prefill: cache_unfinished_req, then the prefill batch merges into
      // the running batch (appended in batch order).
      cache_unfinished(sr.id);
      running_.push_back(sr.id);
    }
  }
  if (any_left) {
    std::erase_if(running_, [&](std::uint64_t id) { return row(id).status != RequestStatus::running; });
    batch_is_full_ = false;
  }
}

void SglangScheduler::release(std::uint64_t id) {
  if (slots_.contains(id) && !slots_.dropped(id)) {
    const Slot& s = slot(id);
    if (s.own != 0 || s.locked != 0 || s.node != RadixKvCache::kRoot)
      broken(fmt::format("request {} released while holding KV", id));
  }
  slots_.drop(id);
}

void SglangScheduler::drop_step(const StepPlan& plan) {
  prefill_in_flight_ = 0;
  for (const ScheduledRequest& sr : plan.scheduled) {
    RequestState& r = row(sr.id);
    if (r.status != RequestStatus::running) continue;
    free_kv(sr.id);
    abort(sr.id, SglangAbort::dropped_step);
    leave_running(sr.id);
  }
}

bool SglangScheduler::has_work() const {
  return !waiting_.empty() || !running_.empty() || has_chunked_ || prefill_in_flight_ > 0 || !pending_aborts_.empty();
}

std::int64_t SglangScheduler::running() const {
  return static_cast<std::int64_t>(running_.size()) + (has_chunked_ ? 1 : 0) + prefill_in_flight_;
}

std::int64_t SglangScheduler::waiting() const { return static_cast<std::int64_t>(waiting_.size()); }

KvUsage SglangScheduler::kv_usage() const {
  KvUsage u;
  if (hybrid_swa()) {  // the full pool, as max_total_num_tokens
    u.capacity_tokens = swa_->full_size();
    u.used_tokens = swa_->request_full_tokens() + swa_->full_protected_size();
    u.cached_tokens = swa_->full_evictable_size();
    return u;
  }
  u.capacity_tokens = cache_.size();
  u.used_tokens = cache_.request_tokens() + cache_.protected_size();
  u.cached_tokens = cache_.evictable_size();
  return u;
}

void SglangScheduler::check_invariants() const {
  cache_.check_invariants();
  if (swa_) swa_->check_invariants();
  if (!(new_token_ratio_ >= 0 && new_token_ratio_ <= 1))
    broken(fmt::format("new_token_ratio {} outside [0, 1]", new_token_ratio_));
  // Ids index the live window of the slots: [base, slots_.end_id()).
  const std::uint64_t base = slots_.begin_id(), end = slots_.end_id();
  auto known = [this](std::uint64_t id) { return !slots_.dropped(id) && slots_[id].known; };
  const std::vector<int> in_waiting = queue_membership(waiting_, base, end, known, "SglangScheduler", "waiting");
  const std::vector<int> in_running = queue_membership(running_, base, end, known, "SglangScheduler", "running");
  Tokens own = 0, swa_own = 0;
  std::int64_t live = 0;
  for (std::uint64_t id = base; id < end; ++id) {
    if (!known(id)) continue;
    const Slot& s = slots_[id];
    const std::size_t i = id - base;
    const RequestState& r = row(id);
    const std::string name = fmt::format("request {}", id);
    own += s.own;
    swa_own += s.swa_own;
    if (s.own < 0 || s.pending < 0 || s.pending > s.own) broken(name + " has a negative or inconsistent slot count");
    if (s.swa_own < 0 || s.swa_evicted < 0 || (!hybrid_swa() && (s.swa_own != 0 || s.swa_evicted != 0)))
      broken(name + " has a negative SWA slot count, or SWA slots without an SWA pool");
    // Its own tokens [locked, locked + own) have SWA slots from max(locked, swa_evicted) on.
    if (hybrid_swa() && s.swa_own != s.locked + s.own - std::max(s.locked, s.swa_evicted))
      broken(fmt::format("{} holds {} SWA slots for tokens {} to {}, evicted up to {}", name, s.swa_own, s.locked,
                         s.locked + s.own, s.swa_evicted));
    const bool chunked = has_chunked_ && chunked_ == id;
    switch (r.status) {
      case RequestStatus::waiting:
      case RequestStatus::preempted:
        if (in_waiting[i] != 1 || in_running[i] != 0 || chunked)
          broken(name + " is waiting but not exactly once in the waiting queue");
        if (s.own != 0 || s.locked != 0 || s.node != RadixKvCache::kRoot || r.computed_tokens != 0)
          broken(name + " is waiting but holds KV");
        break;
      case RequestStatus::running: {
        ++live;
        // Exactly one of: the decode batch, the chunked slot, a prefill in flight.
        const bool in_flight_prefill = s.pending > 0 && in_running[i] == 0 && !chunked;
        if (in_waiting[i] != 0 || in_running[i] + (chunked ? 1 : 0) + (in_flight_prefill ? 1 : 0) != 1)
          broken(name + " is running but not exactly once in the decode batch, the chunked slot or a prefill in flight");
        if (s.locked + s.own != r.computed_tokens + s.pending)
          broken(fmt::format("{} accounts {} locked + {} own tokens for {} computed + {} in flight", name, s.locked,
                             s.own, r.computed_tokens, s.pending));
        Tokens path = 0;
        for (RadixKvCache::NodeId n = s.node; n != RadixKvCache::kRoot;) {
          const bool node_live = swa_ ? swa_->is_live(n) : cache_.is_live(n);
          if (!node_live) broken(name + " locks a freed node");
          if ((swa_ ? swa_->full_lock_ref(n) : cache_.lock_ref(n)) < 1) broken(name + " holds an unlocked node");
          path += swa_ ? swa_->node_tokens(n) : cache_.node_tokens(n);
          n = swa_ ? swa_->parent(n) : cache_.parent(n);
        }
        if (path != s.locked) broken(fmt::format("{} locks a path of {} tokens, accounted {}", name, path, s.locked));
        if (in_running[i] == 1 && (r.output_tokens < 1 || r.remaining_prefill() != 1))
          broken(name + " is in the decode batch but is not decoding");
        break;
      }
      case RequestStatus::finished:
      case RequestStatus::aborted:
        if (in_waiting[i] != 0 || in_running[i] != 0 || chunked) broken(name + " has left but is still queued");
        if (s.own != 0 || s.locked != 0 || s.node != RadixKvCache::kRoot) broken(name + " has left but holds KV");
        if ((r.status == RequestStatus::aborted) != (s.abort != SglangAbort::none))
          broken(name + " is aborted without a reason, or has a reason without being aborted");
        break;
    }
  }
  const Tokens pool_own = swa_ ? swa_->request_full_tokens() : cache_.request_tokens();
  if (own != pool_own)
    broken(fmt::format("requests hold {} slots outside the tree, the pool counts {}", own, pool_own));
  if (swa_own != swa_used())
    broken(fmt::format("requests hold {} SWA slots, the SWA pool counts {}", swa_own, swa_used()));
  const Tokens tree = swa_ ? swa_->tree_full_tokens() : cache_.cached_tokens();
  if (limits_.disable_radix_cache && tree != 0) broken(fmt::format("the ChunkCache holds {} tokens in a tree", tree));
  if (swa_ && cache_.cached_tokens() + cache_.request_tokens() != 0)
    broken("the single-pool cache holds tokens beside the SWA pools");
  if (live != running())
    broken(fmt::format("{} requests have status running, the queues count {}", live, running()));
  if (live > limits_.max_running_requests)
    broken(fmt::format("{} requests running, max_running_requests is {}", live, limits_.max_running_requests));
  const KvUsage u = kv_usage();
  if (u.used_tokens + u.cached_tokens > u.capacity_tokens)
    broken(fmt::format("KV over-committed: {} used + {} cached of {}", u.used_tokens, u.cached_tokens,
                       u.capacity_tokens));
}

}  // namespace headroom::engine
