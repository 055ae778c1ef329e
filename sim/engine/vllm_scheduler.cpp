#include "sim/engine/vllm_scheduler.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "sim/core/error.hpp"

namespace headroom::engine {

namespace {

[[noreturn]] void broken(const std::string& what) { throw std::logic_error("VllmScheduler: " + what); }

std::string id_text(std::uint64_t id) { return "request " + std::to_string(id); }

const char* status_name(RequestStatus s) {
  switch (s) {
    case RequestStatus::waiting: return "waiting";
    case RequestStatus::running: return "running";
    case RequestStatus::preempted: return "preempted";
    case RequestStatus::finished: return "finished";
    case RequestStatus::aborted: return "aborted";
  }
  return "?";
}

void require_at_least(std::int64_t value, std::int64_t least, const char* field) {
  if (value < least)
    throw InputError(std::string("vLLM scheduler: ") + field + " must be at least " + std::to_string(least) +
                     ", got " + std::to_string(value));
}

std::uint32_t checked_num_blocks(const VllmSchedulerLimits& l) {
  require_at_least(l.max_num_batched_tokens, 1, "max_num_batched_tokens");
  require_at_least(l.max_num_seqs, 1, "max_num_seqs");
  require_at_least(l.block_size, 1, "block_size");
  require_at_least(l.num_blocks, 2, "num_blocks (block 0 is the null block)");
  require_at_least(l.max_model_len, 1, "max_model_len");
  if (l.long_prefill_token_threshold) require_at_least(*l.long_prefill_token_threshold, 0, "long_prefill_token_threshold");
  return l.num_blocks;
}

Tokens blocks_for(Tokens tokens, Tokens block_size) { return (tokens + block_size - 1) / block_size; }

}  // namespace

VllmSchedulerLimits vllm_scheduler_limits(const VllmConfig& c, std::int64_t num_blocks) {
  if (!c.max_num_batched_tokens || !c.max_num_seqs || !c.block_size || !c.max_model_len)
    throw std::logic_error("vllm_scheduler_limits: the VllmConfig is not resolved (call resolve() first)");
  if (num_blocks > static_cast<std::int64_t>(UINT32_MAX))
    throw InputError("vLLM scheduler: num_blocks " + std::to_string(num_blocks) + " does not fit in 32 bits");
  VllmSchedulerLimits l;
  l.max_num_batched_tokens = *c.max_num_batched_tokens;
  l.max_num_seqs = *c.max_num_seqs;
  l.block_size = *c.block_size;
  l.num_blocks = num_blocks < 0 ? 0 : static_cast<std::uint32_t>(num_blocks);
  l.enable_prefix_caching = c.enable_prefix_caching;
  l.max_model_len = *c.max_model_len;
  return l;
}

// ---------------------------------------------------------------------------------------------
// Waiting queue

void VllmScheduler::IdRing::grow() {
  std::vector<std::uint64_t> bigger(buf_.empty() ? 64 : 2 * buf_.size());
  for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
  buf_.swap(bigger);
  head_ = 0;
}

void VllmScheduler::IdRing::push_back(std::uint64_t id) {
  if (size_ == buf_.size()) grow();
  buf_[(head_ + size_) & (buf_.size() - 1)] = id;
  ++size_;
}

void VllmScheduler::IdRing::push_front(std::uint64_t id) {
  if (size_ == buf_.size()) grow();
  head_ = (head_ + buf_.size() - 1) & (buf_.size() - 1);
  buf_[head_] = id;
  ++size_;
}

void VllmScheduler::IdRing::pop_front() {
  head_ = (head_ + 1) & (buf_.size() - 1);
  --size_;
}

// ---------------------------------------------------------------------------------------------

VllmScheduler::VllmScheduler(const VllmSchedulerLimits& limits)
    : limits_(limits),
      cache_(checked_num_blocks(limits), limits.block_size, limits.enable_prefix_caching, limits.group_windows,
             limits.chunked_local) {
  // max_num_seqs bounds the running queue and a plan; reserve what a real deployment uses.
  const auto reserve = static_cast<std::size_t>(std::min<std::int64_t>(limits_.max_num_seqs, 4096));
  running_.reserve(reserve);
  prefills_.reserve(reserve);
  last_.reserve(reserve);
  fit_.reserve(reserve);
}

RequestState& VllmScheduler::row(std::uint64_t id) const {
  if (!table_) broken("no request table attached");
  if (!table_->contains(id)) broken(id_text(id) + " is not in the request table");
  return (*table_)[id];
}

KvRequest VllmScheduler::kv_view(const RequestState& r) const {
  KvRequest k;
  k.id = r.id;
  k.prompt_tokens = r.prompt_tokens;
  k.num_tokens = r.prompt_tokens + r.output_tokens;  // Request.num_tokens
  k.num_computed_tokens = r.computed_tokens;
  k.prefix_hashes = r.prefix_hashes;
  k.prefix_block_tokens = r.prefix_block_tokens;
  return k;
}

void VllmScheduler::add_request(std::uint64_t id) {
  RequestState& r = row(id);
  if (slots_.dropped(id) || (slots_.contains(id) && slots_[id]) || r.status != RequestStatus::waiting || r.computed_tokens != 0 ||
      r.output_tokens != 0)
    broken(id_text(id) + " was added twice or is not a new request");
  slots_.extend_to(id);
  slots_[id] = 1;
  // Tokens the request's KV can reach: its last output token is sampled, never fed.
  const Tokens longest = std::min(r.prompt_tokens + r.max_output_tokens, limits_.max_model_len) - 1;
  const bool rejected = r.prompt_tokens < 1 || r.prompt_tokens >= limits_.max_model_len || r.max_output_tokens < 1 ||
                        most_blocks(longest) > static_cast<Tokens>(limits_.num_blocks) - 1;
  if (rejected) {
    r.status = RequestStatus::aborted;
    pending_aborts_.push_back(id);
    return;
  }
  waiting_.push_back(id);
}

Tokens VllmScheduler::most_blocks(Tokens tokens) const {
  // Full attention holds every block; a sliding window at most the window less one token plus one
  // step's tokens, and a block more where the window starts inside one (SlidingWindowSpec.
  // max_memory_usage_bytes); a chunk at most the chunk plus one step's tokens
  // (ChunkedLocalAttentionSpec.max_memory_usage_bytes).
  Tokens blocks = 0;
  for (Tokens w : limits_.group_windows)
    blocks += w == 0 ? blocks_for(tokens, limits_.block_size)
              : limits_.chunked_local
                  ? blocks_for(std::min(w + limits_.max_num_batched_tokens, tokens), limits_.block_size)
                  : std::min(blocks_for(tokens, limits_.block_size),
                             blocks_for(std::min(w - 1 + limits_.max_num_batched_tokens, tokens), limits_.block_size) + 1);
  return blocks;
}

bool VllmScheduler::stops(const RequestState& r) const {
  return r.done() || r.prompt_tokens + r.output_tokens >= limits_.max_model_len;  // check_stop
}

inline bool VllmScheduler::allocate_or_preempt(const KvRequest& kv, std::uint64_t id, Tokens n, StepPlan& plan) {
  while (!cache_.allocate_slots(kv, n)) {
    const std::uint64_t victim = running_.back();  // FCFS: the newest
    running_.pop_back();
    preempt(victim, plan);
    if (victim == id) return false;
  }
  return true;
}

void VllmScheduler::preempt(std::uint64_t id, StepPlan& plan) {
  // Scheduler._preempt_request: free, PREEMPTED, num_computed_tokens = 0, prepend to waiting.
  RequestState& r = row(id);
  cache_.free(id);  // hashes kept: a resumed request finds its blocks again if not evicted
  r.status = RequestStatus::preempted;
  r.computed_tokens = 0;
  ++r.preemptions;
  ++counters_.preemptions;
  waiting_.push_front(id);
  plan.preempted.push_back(id);
}

inline void VllmScheduler::add_to_plan(const RequestState& r, Tokens new_tokens, StepPlan& plan) {
  const Tokens num_tokens = r.prompt_tokens + r.output_tokens;
  ScheduledRequest s;
  s.id = r.id;
  s.new_tokens = new_tokens;
  s.context_tokens = r.computed_tokens;
  // Past its prefill: one token left to feed, the last sampled one.
  s.is_decode = r.output_tokens > 0 && num_tokens - r.computed_tokens == 1;
  // A prefill chunk's sample is discarded; the step that reaches num_tokens yields a token.
  s.samples = r.computed_tokens + new_tokens >= num_tokens;
  // vLLM reorders the batch decodes first (reorder_batch_to_split_decodes_and_prefills).
  if (s.is_decode) plan.add(s);
  else prefills_.push_back(s);
}

void VllmScheduler::schedule(Seconds now, StepPlan& plan) {
  if (!table_) broken("no request table attached");
  if (step_in_flight_) broken("schedule called before the previous step completed or was dropped");
  plan.clear();
  prefills_.clear();
  report_pending_aborts(plan);
  Tokens budget = limits_.max_num_batched_tokens;
  const Tokens threshold = limits_.long_prefill_token_threshold.value_or(0);
  auto cap = [&](Tokens n) {
    if (threshold > 0 && n > threshold) n = threshold;
    return std::min(n, budget);
  };

  // RUNNING requests first, in order.
  std::size_t index = 0;
  bool fit_kept = false;
  if (steady_ && static_cast<Tokens>(running_.size()) <= budget) {
    // The last plan decoded every running request and none finished: each decodes again, its
    // context one token longer (the entry add_to_plan would build from its row). Only one whose
    // next token passes the tokens its held blocks take (fit_, PagedKvCache::decode_fit_limit)
    // goes through allocate_slots, with the general loop's preemptions in the same order; those
    // take running_'s back, whose entries are the plan's last.
    plan.scheduled.assign(last_.begin(), last_.end());
    if (!fit_known_ || cache_.prefix_lookup_pending()) {
      fit_.resize(last_.size());
      for (std::size_t i = 0; i < last_.size(); ++i) fit_[i] = cache_.decode_fit_limit(last_[i].id);
    }
    while (index < running_.size()) {
      ScheduledRequest& s = plan.scheduled[index];
      ++s.context_tokens;
      if (s.context_tokens + 1 > fit_[index]) {
        if (!allocate_or_preempt(kv_view((*table_)[s.id]), s.id, 1, plan)) break;
        fit_[index] = cache_.decode_fit_limit(s.id);
      }
      ++index;
    }
    plan.scheduled.resize(index);
    fit_.resize(index);
    plan.total_tokens += static_cast<Tokens>(index);
    plan.decode_seqs += static_cast<std::int64_t>(index);
    budget -= static_cast<Tokens>(index);
    fit_kept = true;
  }
  while (index < running_.size() && budget > 0) {
    RequestState& r = (*table_)[running_[index]];
    const Tokens remaining = r.prompt_tokens + r.output_tokens - r.computed_tokens;
    if (remaining < 1) broken(id_text(r.id) + " is running with nothing left to compute");
    const Tokens n = cap(remaining);
    // Most decodes fit in the blocks the request holds: allocate_slots would return at once.
    if (!cache_.fits_held_blocks(r.id, r.computed_tokens + n, r.prompt_tokens + r.output_tokens)) {
      if (!allocate_or_preempt(kv_view(r), r.id, n, plan)) break;
    }
    add_to_plan(r, n, plan);
    budget -= n;
    ++index;
  }

  // WAITING requests next, only when nothing was preempted.
  if (plan.preempted.empty()) {
    while (!waiting_.empty() && budget > 0 && static_cast<std::int64_t>(running_.size()) < limits_.max_num_seqs) {
      RequestState& r = (*table_)[waiting_.front()];
      KvRequest kv = kv_view(r);
      const Tokens hit = cache_.find_cached_prefix(kv);  // applied by the allocate_slots below
      const Tokens n = cap(kv.num_tokens - hit);
      if (!cache_.allocate_slots(kv, n)) break;  // no preemption for admission
      waiting_.pop_front();
      running_.push_back(r.id);
      if (r.first_scheduled_s < 0) {
        // Request.num_cached_tokens is set once, at the first admission; the hit rate counts new
        // requests only (PrefixCacheStats keeps preempted ones apart).
        r.first_scheduled_s = now;
        r.cached_tokens = hit;
        counters_.prefix_query_tokens += kv.num_tokens;
        counters_.prefix_hit_tokens += hit;
      }
      r.status = RequestStatus::running;
      r.computed_tokens = hit;
      add_to_plan(r, n, plan);
      budget -= n;
    }
  }

  for (const ScheduledRequest& s : prefills_) plan.add(s);
  steady_ = false;
  // fit_ follows running_ when the steady path made this plan and nothing was admitted after it.
  fit_known_ = fit_kept && fit_.size() == running_.size();
  last_.assign(plan.scheduled.begin(), plan.scheduled.end());
  last_total_tokens_ = plan.total_tokens;
  step_in_flight_ = !plan.empty();
}

void VllmScheduler::remove_from_running(RequestStatus status) {
  // Order-preserving, in place (vLLM rebuilds self.running without the stopped requests).
  auto end = std::remove_if(running_.begin(), running_.end(),
                            [&](std::uint64_t id) { return (*table_)[id].status == status; });
  running_.erase(end, running_.end());
}

void VllmScheduler::complete_step(const StepPlan& plan, Seconds now, std::vector<std::uint64_t>& finished) {
  if (!step_in_flight_ || plan.scheduled.size() != last_.size())
    broken("complete_step with a plan this scheduler did not just make");
  step_in_flight_ = false;
  bool any_finished = false;
  for (const ScheduledRequest& s : plan.scheduled) {
    RequestState& r = (*table_)[s.id];  // schedule() found it there
    if (r.status != RequestStatus::running) broken(id_text(s.id) + " completed a step while " + status_name(r.status));
    r.computed_tokens += s.new_tokens;
    if (!s.samples) continue;
    ++r.output_tokens;
    if (r.first_token_s < 0) r.first_token_s = now;
    if (stops(r)) {
      r.status = RequestStatus::finished;
      r.finish_s = now;
      cache_.free(r.id);  // hashes kept (prefix caching)
      finished.push_back(r.id);
      any_finished = true;
    }
  }
  if (any_finished) remove_from_running(RequestStatus::finished);
  // The next plan may be this one, a token on (schedule's steady path): every running request
  // decoded and is still running.
  steady_ = !any_finished && plan.decode_seqs == plan.seqs() && plan.scheduled.size() == running_.size();
  fit_known_ = fit_known_ && steady_;
}

void VllmScheduler::release(std::uint64_t id) {
  if (cache_.blocks_held(id) != 0) broken(id_text(id) + " released while holding KV blocks");
  slots_.drop(id);
  cache_.release(id);
}

void VllmScheduler::drop_step(const StepPlan& plan) {
  if (!step_in_flight_ || plan.scheduled.size() != last_.size())
    broken("drop_step with a plan this scheduler did not just make");
  step_in_flight_ = false;
  steady_ = false;
  fit_known_ = false;
  bool any = false;
  for (const ScheduledRequest& s : plan.scheduled) {
    RequestState& r = row(s.id);
    if (r.status != RequestStatus::running) continue;
    r.status = RequestStatus::aborted;
    cache_.free(r.id);
    any = true;
  }
  if (any) remove_from_running(RequestStatus::aborted);
}

KvUsage VllmScheduler::kv_usage() const {
  const Tokens usable = static_cast<Tokens>(cache_.num_blocks()) - 1;
  const Tokens free_blocks = cache_.num_free_blocks();
  const auto groups = static_cast<Tokens>(cache_.num_groups());
  KvUsage u;
  u.capacity_tokens = usable * limits_.block_size / groups;
  u.used_tokens = (usable - free_blocks) * limits_.block_size / groups;
  u.cached_tokens = static_cast<Tokens>(cache_.num_cached_free_blocks()) * limits_.block_size / groups;
  return u;
}

std::vector<std::uint64_t> VllmScheduler::waiting_queue() const {
  std::vector<std::uint64_t> out;
  out.reserve(waiting_.size());
  for (std::size_t i = 0; i < waiting_.size(); ++i) out.push_back(waiting_[i]);
  return out;
}

void VllmScheduler::check_invariants() const {
  cache_.check_invariants();
  if (!table_) broken("no request table attached");
  const RequestTable& table = *table_;
  const Tokens bs = limits_.block_size;
  // Ids index the live window of the table: [base, base + table.size()).
  const std::uint64_t base = table.begin_id();

  // Queues against statuses: each id once, in the queue its status names.
  std::vector<std::uint8_t> where(table.size(), 0);  // 1 running, 2 waiting
  for (std::uint64_t id : running_) {
    if (!table.contains(id) || table.dropped(id)) broken("running " + id_text(id) + " is not in the table");
    if (where[id - base]) broken(id_text(id) + " is queued twice");
    where[id - base] = 1;
  }
  for (std::size_t i = 0; i < waiting_.size(); ++i) {
    const std::uint64_t id = waiting_[i];
    if (!table.contains(id) || table.dropped(id)) broken("waiting " + id_text(id) + " is not in the table");
    if (where[id - base]) broken(id_text(id) + " is queued twice");
    where[id - base] = 2;
  }
  if (static_cast<std::int64_t>(running_.size()) > limits_.max_num_seqs)
    broken(std::to_string(running_.size()) + " running requests exceed max_num_seqs " +
           std::to_string(limits_.max_num_seqs));

  // The step in flight: blocks were allocated for its tokens, which computed does not count yet.
  std::vector<Tokens> in_flight(table.size(), 0);
  if (step_in_flight_)
    for (const ScheduledRequest& s : last_) {
      if (!table.contains(s.id)) broken("scheduled " + id_text(s.id) + " is not in the table");
      in_flight[s.id - base] = s.new_tokens;
    }

  std::vector<std::uint8_t> held(cache_.num_blocks(), 0);
  Tokens distinct = 0;
  for (std::uint64_t id = base; id < table.end_id(); ++id) {
    const std::size_t i = id - base;
    const std::span<const PagedKvCache::BlockId> blocks = cache_.block_table(id);
    if (table.dropped(id)) {  // released: reported and gone
      if (where[i] != 0 || !blocks.empty()) broken("released " + id_text(id) + " is queued or holds KV");
      continue;
    }
    const RequestState& r = table[id];
    if (!slots_.contains(id) || slots_.dropped(id) || !slots_[id]) {
      if (where[i] != 0 || !blocks.empty()) broken(id_text(id) + " was never added but is queued or holds KV");
      continue;
    }
    const bool queued_waiting = r.status == RequestStatus::waiting || r.status == RequestStatus::preempted;
    if (r.status == RequestStatus::running && where[i] != 1) broken(id_text(id) + " is running but not queued as running");
    if (queued_waiting && where[i] != 2) broken(id_text(id) + " is " + status_name(r.status) + " but not in the waiting queue");
    if (!queued_waiting && r.status != RequestStatus::running && where[i] != 0)
      broken(id_text(id) + " is " + status_name(r.status) + " but still queued");
    if (r.status != RequestStatus::running) {
      if (!blocks.empty()) broken(id_text(id) + " is " + status_name(r.status) + " but holds KV blocks");
      if (queued_waiting && r.computed_tokens != 0) broken(id_text(id) + " waits with computed tokens");
      continue;
    }
    const Tokens tokens = r.computed_tokens + in_flight[i];
    if (tokens < 1 || tokens > r.prompt_tokens + r.output_tokens)
      broken(id_text(id) + " has " + std::to_string(tokens) + " tokens computed or in flight, outside [1, num_tokens]");
    for (std::size_t g = 0; g < cache_.num_groups(); ++g) {
      const std::span<const PagedKvCache::BlockId> group_blocks = cache_.block_table(id, g);
      if (static_cast<Tokens>(group_blocks.size()) != blocks_for(tokens, bs))
        broken(id_text(id) + " holds " + std::to_string(group_blocks.size()) + " blocks for " + std::to_string(tokens) +
               " tokens of " + std::to_string(bs) + " in KV cache group " + std::to_string(g));
      // Blocks wholly before the window of the tokens computed at the request's last allocation
      // were freed then (remove_skipped_blocks): this step's, or at most a step's tokens ago.
      const Tokens window = cache_.group_window(g);
      const Tokens computed_then = in_flight[i] > 0 ? r.computed_tokens : r.computed_tokens - limits_.max_num_batched_tokens;
      const Tokens skipped = window == 0             ? 0
                             : limits_.chunked_local ? std::max<Tokens>(0, computed_then) / window * window / bs
                                                     : std::max<Tokens>(0, computed_then - window + 1) / bs;
      for (Tokens k = 0; k < static_cast<Tokens>(group_blocks.size()); ++k) {
        const PagedKvCache::BlockId b = group_blocks[static_cast<std::size_t>(k)];
        if (k < skipped && b != PagedKvCache::kNullBlock)
          broken(id_text(id) + " still holds block " + std::to_string(b) + " behind its sliding window in KV cache group " +
                 std::to_string(g));
        if (b != PagedKvCache::kNullBlock && !held[b]) {
          held[b] = 1;
          ++distinct;
        }
      }
    }
  }
  const Tokens usable = static_cast<Tokens>(cache_.num_blocks()) - 1;
  if (distinct > usable) broken("KV over-committed: " + std::to_string(distinct) + " blocks held of " + std::to_string(usable));
  if (distinct != usable - static_cast<Tokens>(cache_.num_free_blocks()))
    broken("running requests hold " + std::to_string(distinct) + " blocks but " +
           std::to_string(usable - static_cast<Tokens>(cache_.num_free_blocks())) + " are out of the free queue");
  if (cache_.num_requests() != running_.size()) broken("the KV cache tracks requests that are not running");
  // The steady path's block limits follow the running requests' blocks.
  if (fit_known_) {
    if (fit_.size() != running_.size()) broken("the steady plan's block limits do not follow the running queue");
    for (std::size_t i = 0; i < running_.size(); ++i)
      if (!cache_.prefix_lookup_pending() && fit_[i] != cache_.decode_fit_limit(running_[i]))
        broken(id_text(running_[i]) + " has a steady block limit of " + std::to_string(fit_[i]) + " tokens, the KV cache " +
               std::to_string(cache_.decode_fit_limit(running_[i])));
  }

  // The last plan.
  Tokens total = 0;
  bool prefill_seen = false;
  const Tokens threshold = limits_.long_prefill_token_threshold.value_or(0);
  for (const ScheduledRequest& s : last_) {
    if (s.new_tokens < 1) broken(id_text(s.id) + " was scheduled with no tokens");
    if (threshold > 0 && s.new_tokens > threshold)
      broken(id_text(s.id) + " was scheduled " + std::to_string(s.new_tokens) + " tokens, above long_prefill_token_threshold");
    if (s.is_decode && s.new_tokens != 1) broken(id_text(s.id) + " decodes " + std::to_string(s.new_tokens) + " tokens");
    if (s.is_decode && prefill_seen) broken("the last plan has a decode after a prefill");
    prefill_seen = prefill_seen || !s.is_decode;
    total += s.new_tokens;
  }
  if (total != last_total_tokens_) broken("the last plan's total tokens do not add up");
  if (total > limits_.max_num_batched_tokens)
    broken("the last plan has " + std::to_string(total) + " tokens, above max_num_batched_tokens " +
           std::to_string(limits_.max_num_batched_tokens));
  if (static_cast<std::int64_t>(last_.size()) > limits_.max_num_seqs) broken("the last plan exceeds max_num_seqs");
}

}  // namespace headroom::engine
