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
  if (l.swa_capacity > 0 && !l.disable_radix_cache)
    throw InputError("sglang SWA pool: its prefix cache (SWARadixCache) is not modelled; the SWA pool runs with "
                     "disable_radix_cache (ChunkCache)");
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
  // evict_from_tree_cache (mem_cache/common.py): evict only the shortfall.
  const Tokens available = cache_.available_size();
  if (available < slots_needed) cache_.evict(slots_needed - available);
}

Tokens SglangScheduler::available_for_alloc() const {
  // SWATokenToKVPoolAllocator.available_size: the smaller of the two pools' free slots (§2.2).
  return hybrid_swa() ? std::min(cache_.available_size(), swa_available()) : cache_.available_size();
}

bool SglangScheduler::check_decode_mem(Tokens slots_needed) {
  evict_for(slots_needed);
  return available_for_alloc() >= slots_needed;
}

void SglangScheduler::evict_swa(Slot& s, Tokens pre_len) {
  // ScheduleBatch._evict_swa with a ChunkCache (schedule_batch.py, sgl-project/sglang main 2026):
  // the SWA slots of tokens before pre_len − window − page_size go back to the SWA pool.
  const Tokens target = std::max(s.swa_evicted, pre_len - limits_.sliding_window - limits_.page_size);
  if (target <= s.swa_evicted) return;
  const Tokens freed = target - s.swa_evicted;
  if (freed > s.swa_own) broken(fmt::format("SWA eviction of {} slots from a request holding {}", freed, s.swa_own));
  s.swa_own -= freed;
  swa_used_ -= freed;
  s.swa_evicted = target;
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
    if (s_.hybrid_swa() && swa_budget(extend) >= rem_swa()) return;
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
    const RadixKvCache::Match m = s_.limits_.disable_radix_cache ? RadixKvCache::Match{} : s_.cache_.match_prefix(k);
    const Tokens extend = r.prompt_tokens + r.output_tokens - m.tokens;
    // The check counts the outputs still to come (PrefillAdder.add_one_req since mid-2025:
    // min(max(max_new − generated, 0), clip)), the reservation the request's max_new_tokens. For a
    // request never retracted the two are equal; counting a retracted request's full max_new on
    // top of the outputs it re-prefills (older releases) can leave it unable ever to fit.
    const Tokens max_new = std::min(r.max_output_tokens, kSglangClipMaxNewTokens);
    const Tokens total = extend + std::min(r.max_output_tokens - r.output_tokens, kSglangClipMaxNewTokens);
    if (static_cast<double>(total) >= rem_total()) return AddResult::no_token;
    if (s_.hybrid_swa() && swa_budget(extend) >= rem_swa()) return AddResult::no_token;
    if (extend > rem_input_ && !s_.admitted_.empty()) return AddResult::other;
    s_.cache_.inc_lock_ref(m.node);  // locking the prefix takes it out of the evictable budget
    if (static_cast<double>(total) > rem_total()) {
      s_.cache_.dec_lock_ref(m.node);
      return AddResult::no_token;
    }
    Tokens n = extend;
    if (!chunking_ || extend <= rem_chunk_) {
      update_budget(extend, max_new);
    } else {
      if (rem_chunk_ <= 0) {
        s_.cache_.dec_lock_ref(m.node);
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
  double rem_total() const {
    return static_cast<double>(s_.cache_.available_size() + s_.cache_.evictable_size()) - total_offset_;
  }
  // rem_swa_tokens: the SWA pool's free slots (a ChunkCache holds none evictable) less what the
  // batch reserves (schedule_policy.py, sgl-project/sglang main 2026).
  Tokens rem_swa() const { return s_.swa_available() - swa_offset_; }
  // _swa_budget_for_req: the slots a prefill takes before _evict_swa returns them, at least a
  // window for the decode to come, plus a page.
  Tokens swa_budget(Tokens extend) const {
    const Tokens alloc = chunking_ ? std::min(extend, rem_chunk_) : extend;
    return std::max(alloc, s_.limits_.sliding_window) + s_.limits_.page_size;
  }
  // _update_prefill_budget.
  void update_budget(Tokens extend, Tokens max_new) {
    if (s_.hybrid_swa()) swa_offset_ += swa_budget(extend);
    total_offset_ += static_cast<double>(extend + max_new);
    rem_input_ -= extend;
    if (chunking_) rem_chunk_ -= extend;
  }
  AddResult budget_state() const {
    if (rem_total() <= 0) return AddResult::no_token;
    if (s_.hybrid_swa() && rem_swa() <= 0) return AddResult::no_token;
    if (rem_input_ <= 0 || (chunking_ && rem_chunk_ <= 0)) return AddResult::other;
    return AddResult::proceed;
  }

  SglangScheduler& s_;
  const bool chunking_;
  Tokens rem_input_;
  Tokens rem_chunk_;
  double total_offset_ = 0;  // rem_total_token_offset
  Tokens swa_offset_ = 0;    // rem_swa_token_offset
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
  // maybe_evict_swa (extend, ChunkCache): each request's SWA slots before its prefix less the
  // window go back first.
  if (hybrid_swa())
    for (std::uint64_t id : admitted_) evict_swa(slot(id), row(id).computed_tokens);
  for (std::size_t i = 0; i < admitted_.size(); ++i) {
    const std::uint64_t id = admitted_[i];
    const Tokens n = admitted_tokens_[i];
    if (!cache_.alloc(n))
      broken(fmt::format("prefill out of memory: {} tokens for request {} with {} available", n, id,
                         cache_.available_size()));
    Slot& s = slot(id);
    if (hybrid_swa()) {
      if (n > swa_available())
        broken(fmt::format("prefill out of SWA memory: {} tokens for request {} with {} available", n, id,
                           swa_available()));
      swa_used_ += n;
      s.swa_own += n;
    }
    s.own += n;
    s.pending = n;
    RequestState& r = row(id);
    if (r.first_scheduled_s < 0) r.first_scheduled_s = now;
    ScheduledRequest sr;
    sr.id = id;
    sr.new_tokens = n;
    sr.context_tokens = r.computed_tokens;
    sr.is_decode = false;
    sr.samples = n == r.remaining_prefill();
    if (sr.samples) ++prefill_in_flight_;
    plan.add(sr);
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
    if (!cache_.alloc(1))
      broken(fmt::format("decode out of memory for request {} after check_decode_mem passed", id));
    Slot& s = slot(id);
    if (hybrid_swa()) {
      if (swa_available() < 1) broken(fmt::format("decode out of SWA memory for request {}", id));
      ++swa_used_;
      ++s.swa_own;
      ++s.decode_steps;
    }
    s.own += 1;
    s.pending = 1;
    const RequestState& r = row(id);
    ScheduledRequest sr;
    sr.id = id;
    sr.new_tokens = 1;
    sr.context_tokens = r.computed_tokens;
    sr.is_decode = true;
    sr.samples = true;
    plan.add(sr);
  }
}

void SglangScheduler::free_kv(std::uint64_t id) {
  // release_kv_cache(req, tree_cache, is_insert=False): the request's own slots go back to the
  // pool, its prefix path is unlocked (and stays cached).
  Slot& s = slot(id);
  cache_.free(s.own);
  cache_.dec_lock_ref(s.node);
  s.own = 0;
  s.pending = 0;
  s.node = RadixKvCache::kRoot;
  s.locked = 0;
  swa_used_ -= s.swa_own;
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
  cache_.insert(kv_request(r), r.computed_tokens, s.locked);
  cache_.dec_lock_ref(s.node);
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
  u.capacity_tokens = cache_.size();
  u.used_tokens = cache_.request_tokens() + cache_.protected_size();
  u.cached_tokens = cache_.evictable_size();
  return u;
}

void SglangScheduler::check_invariants() const {
  cache_.check_invariants();
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
    if (hybrid_swa() && s.swa_own != s.locked + s.own - s.swa_evicted)
      broken(fmt::format("{} holds {} SWA slots for {} tokens with KV, {} of them evicted", name, s.swa_own,
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
        for (RadixKvCache::NodeId n = s.node; n != RadixKvCache::kRoot; n = cache_.parent(n)) {
          if (!cache_.is_live(n)) broken(name + " locks a freed node");
          if (cache_.lock_ref(n) < 1) broken(name + " holds an unlocked node");
          path += cache_.node_tokens(n);
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
  if (own != cache_.request_tokens())
    broken(fmt::format("requests hold {} slots outside the tree, the pool counts {}", own, cache_.request_tokens()));
  if (swa_own != swa_used_ || swa_used_ > limits_.swa_capacity)
    broken(fmt::format("requests hold {} SWA slots, the SWA pool counts {} of {}", swa_own, swa_used_,
                       limits_.swa_capacity));
  if (limits_.disable_radix_cache && cache_.cached_tokens() != 0)
    broken(fmt::format("the ChunkCache holds {} tokens in a tree", cache_.cached_tokens()));
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
