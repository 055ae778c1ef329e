#include "sim/engine/lightllm_scheduler.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/engine/queue_membership.hpp"

namespace headroom::engine {

namespace {

[[noreturn]] void broken(const std::string& what) { throw std::logic_error("LightllmScheduler: " + what); }

LightllmSchedulerLimits checked(const LightllmSchedulerLimits& l) {
  auto at_least_one = [](std::string_view field, std::int64_t v) {
    if (v < 1) throw InputError(fmt::format("lightllm {}: expected at least 1, got {}", field, v));
  };
  at_least_one("max_total_token_num", l.kv_capacity);
  at_least_one("running_max_req_size", l.running_max_req_size);
  at_least_one("max_req_total_len", l.max_req_total_len);
  at_least_one("batch_max_tokens", l.batch_max_tokens);
  at_least_one("chunked_prefill_size", l.chunked_prefill_size);
  at_least_one("router_max_new_token_len", l.router_max_new_token_len);
  // lightllm/server/api_start.py asserts these at start-up.
  if (l.chunked_prefill && l.batch_max_tokens < l.chunked_prefill_size)
    throw InputError(fmt::format("lightllm batch_max_tokens {}: chunked prefill mode needs batch_max_tokens >= "
                                 "chunked_prefill_size ({})",
                                 l.batch_max_tokens, l.chunked_prefill_size));
  if (!l.chunked_prefill && l.batch_max_tokens < l.max_req_total_len)
    throw InputError(fmt::format("lightllm batch_max_tokens {}: without chunked prefill batch_max_tokens must be >= "
                                 "max_req_total_len ({})",
                                 l.batch_max_tokens, l.max_req_total_len));
  if (!(l.router_token_ratio >= 0))
    throw InputError(fmt::format("lightllm router_token_ratio: expected a value >= 0, got {}", l.router_token_ratio));
  return l;
}

}  // namespace

std::string_view lightllm_abort_name(LightllmAbort reason) {
  switch (reason) {
    case LightllmAbort::none: return "none";
    case LightllmAbort::max_req_total_len: return "longer than max_req_total_len";
    case LightllmAbort::exceeds_kv_pool: return "longer than the KV pool";
    case LightllmAbort::dropped_step: return "dropped step";
  }
  return "?";
}

LightllmSchedulerLimits lightllm_scheduler_limits(const LightllmConfig& c, Tokens kv_capacity) {
  if (!c.batch_max_tokens)
    throw std::logic_error("lightllm_scheduler_limits: the LightllmConfig is not resolved (call resolve() first)");
  LightllmSchedulerLimits l;
  l.kv_capacity = kv_capacity;
  l.running_max_req_size = c.running_max_req_size;
  l.batch_max_tokens = *c.batch_max_tokens;
  l.max_req_total_len = c.max_req_total_len;
  l.chunked_prefill_size = c.chunked_prefill_size;
  l.chunked_prefill = !c.disable_chunked_prefill;
  return l;
}

Tokens lightllm_worst_case_peak(std::vector<LightllmTokenTuple>& tuples) {
  // Ties in `left` do not change the maximum (within a tie the last index dominates and sees the
  // same prefix sum), so an unstable sort is enough.
  std::sort(tuples.begin(), tuples.end(),
            [](const LightllmTokenTuple& a, const LightllmTokenTuple& b) { return a.left > b.left; });
  Tokens peak = 0, used = 0;
  for (std::size_t i = 0; i < tuples.size(); ++i) {
    used += tuples[i].used;
    peak = std::max(peak, tuples[i].left * static_cast<Tokens>(i + 1) + used);
  }
  return peak;
}

LightllmScheduler::LightllmScheduler(const LightllmSchedulerLimits& limits)
    : limits_(checked(limits)), pool_(limits.kv_capacity) {}

LightllmAbort LightllmScheduler::abort_reason(std::uint64_t id) const {
  return slots_.contains(id) && !slots_.dropped(id) ? slots_[id].abort : LightllmAbort::none;
}

void LightllmScheduler::add_request(std::uint64_t id) {
  if (!table_) broken("add_request before attach");
  if (!table_->contains(id)) broken(fmt::format("request {} is not in the table", id));
  if (slots_.dropped(id)) broken(fmt::format("request {} added after its release", id));
  slots_.extend_to(id);
  Slot& s = slots_[id];
  if (s.known) broken(fmt::format("request {} added twice", id));
  s = Slot{};
  s.known = true;
  RequestState& r = row(id);
  // httpserver/manager.py: the request's total length is checked before it reaches the router.
  LightllmAbort reason = LightllmAbort::none;
  if (r.prompt_tokens + r.max_output_tokens > limits_.max_req_total_len) reason = LightllmAbort::max_req_total_len;
  else if (r.prompt_tokens + r.max_output_tokens + 1 > limits_.kv_capacity) reason = LightllmAbort::exceeds_kv_pool;
  if (reason != LightllmAbort::none) {
    r.status = RequestStatus::aborted;
    s.abort = reason;
    pending_aborts_.push_back(id);
    return;
  }
  r.status = RequestStatus::waiting;
  waiting_.push_back(id);
}

bool LightllmScheduler::is_busy() const {
  // BaseQueue.is_busy: used / max_total >= router_token_ratio.
  return static_cast<double>(pool_.used()) / static_cast<double>(pool_.size()) >= limits_.router_token_ratio;
}

LightllmTokenTuple LightllmScheduler::token_tuple(std::uint64_t id, bool busy) const {
  // req.py NormalReq.get_tuple_tokens.
  const RequestState& r = row(id);
  const Tokens out = r.output_tokens;
  Tokens est = r.max_output_tokens;
  if (!busy)
    est = std::min(r.max_output_tokens,
                   std::max(static_cast<Tokens>(1.1 * static_cast<double>(out)), limits_.router_max_new_token_len));
  const Slot& s = slots_[id];
  if (r.status == RequestStatus::waiting) return {r.prompt_tokens + 1, std::max<Tokens>(0, est - 2)};
  if (s.paused) return {r.prompt_tokens + out + 1, std::max<Tokens>(0, est - out - 2)};
  return {r.prompt_tokens + out, std::max<Tokens>(0, est - out - 1)};
}

void LightllmScheduler::admit() {
  // ChunkedPrefillQueue.generate_new_batch.
  if (waiting_.empty()) return;
  if (static_cast<std::int64_t>(running_.size()) >= limits_.running_max_req_size) return;
  const bool busy = is_busy();
  tuples_.clear();
  Tokens first_need = 0;  // Batch.get_batch_decode_need_tokens: one per running request
  for (std::uint64_t id : running_) {
    tuples_.push_back(token_tuple(id, busy));
    if (!slots_[id].paused) ++first_need;
  }
  std::size_t taken = 0;
  for (std::uint64_t id : waiting_) {
    const RequestState& r = row(id);
    tuples_.push_back(token_tuple(id, busy));
    const Tokens peak = lightllm_worst_case_peak(tuples_);
    const bool ok_token = peak < limits_.kv_capacity;  // + frozen tokens: 0 without PD transfer
    const bool ok_req = static_cast<std::int64_t>(tuples_.size()) <= limits_.running_max_req_size;
    // get_first_router_need_tokens: the first chunk (ChunkedPrefillReq) or the whole prompt.
    first_need += limits_.chunked_prefill ? std::min<Tokens>(r.prompt_tokens, limits_.chunked_prefill_size)
                                          : r.prompt_tokens;
    const bool ok_prefill = first_need <= limits_.batch_max_tokens;
    if (!(ok_token && ok_req && ok_prefill)) break;
    ++taken;
  }
  for (std::size_t i = 0; i < taken; ++i) {
    const std::uint64_t id = waiting_.front();
    waiting_.pop_front();
    row(id).status = RequestStatus::running;
    running_.push_back(id);
  }
}

void LightllmScheduler::free_kv(std::uint64_t id) {
  if (held(id) > 0) pool_.free(id);
  slots_[id].pending = 0;
}

void LightllmScheduler::pause(std::uint64_t id, StepPlan& plan) {
  // InferReqContext.pause_reqs: the KV is freed, cur_kv_len = 0.
  free_kv(id);
  RequestState& r = row(id);
  r.computed_tokens = 0;
  r.status = RequestStatus::preempted;
  ++r.preemptions;
  ++counters_.preemptions;
  slots_[id].paused = true;
  ++paused_count_;
  plan.preempted.push_back(id);
}

std::int64_t LightllmScheduler::recover(Tokens can_alloc) {
  // InferReqContext.recover_paused_reqs: in batch order while the whole sequence fits; the
  // requests paused in this same step are not among the candidates.
  std::int64_t recovered = 0;
  for (std::uint64_t id : running_) {
    Slot& s = slots_[id];
    if (!s.paused || std::find(wait_pause_.begin(), wait_pause_.end(), id) != wait_pause_.end()) continue;
    const RequestState& r = row(id);
    const Tokens need = r.prompt_tokens + r.output_tokens;
    if (need > can_alloc) break;
    s.paused = false;
    --paused_count_;
    row(id).status = RequestStatus::running;
    can_alloc -= need;
    ++recovered;
  }
  return recovered;
}

bool LightllmScheduler::classify(StepPlan& plan, bool recover_now) {
  // ModeBackend._get_classed_reqs, in batch order.
  prefill_.clear();
  prefill_tokens_.clear();
  decode_.clear();
  wait_pause_.clear();
  Tokens can_alloc = pool_.can_use_mem_size();
  Tokens prefill_tokens = 0;
  for (std::uint64_t id : running_) {
    if (slots_[id].paused) continue;
    const RequestState& r = row(id);
    const Tokens remaining = r.remaining_prefill();
    if (remaining == 1) {  // cur_kv_len + 1 == total length: a decode
      if (can_alloc >= 1) {
        decode_.push_back(id);
        can_alloc -= 1;
      } else if (static_cast<int>(wait_pause_.size()) < kLightllmPauseMaxReqNum) {
        wait_pause_.push_back(id);
      }
      continue;
    }
    const Tokens need = limits_.chunked_prefill ? std::min<Tokens>(remaining, limits_.chunked_prefill_size) : remaining;
    if (prefill_tokens + need > limits_.batch_max_tokens) continue;
    if (need <= can_alloc) {
      prefill_tokens += need;
      prefill_.push_back(id);
      prefill_tokens_.push_back(need);
      can_alloc -= need;
    } else if (static_cast<int>(wait_pause_.size()) < kLightllmPauseMaxReqNum) {
      wait_pause_.push_back(id);
    }
  }
  for (std::uint64_t id : wait_pause_) pause(id, plan);
  last_recovered_ = recover_now ? recover(can_alloc) : 0;
  ++step_count_;  // ControlState.select_run_way

  // The aggressive run way (LightLLM's default): a prefill batch whenever there is one.
  if (!prefill_.empty()) {
    for (std::size_t i = 0; i < prefill_.size(); ++i) {
      const std::uint64_t id = prefill_[i];
      const Tokens n = prefill_tokens_[i];
      if (!pool_.alloc(id, n)) broken(fmt::format("prefill of {} tokens for request {} does not fit", n, id));
      slots_[id].pending = n;
      const RequestState& r = row(id);
      plan.add({.id = id,
                .new_tokens = n,
                .context_tokens = r.computed_tokens,
                .is_decode = false,
                .samples = n == r.remaining_prefill()});
    }
    return true;
  }
  if (!decode_.empty()) {
    // Decodes first: a prompt whose last token is left (kv + 1 == total, nothing generated yet)
    // runs in the decode batch too, after the true decodes.
    auto add_decode = [&](std::uint64_t id, const RequestState& r, bool is_decode) {
      if (!pool_.alloc(id, 1)) broken(fmt::format("decode for request {} does not fit", id));
      slots_[id].pending = 1;
      plan.add({.id = id, .new_tokens = 1, .context_tokens = r.computed_tokens, .is_decode = is_decode, .samples = true});
    };
    bool prompt_ends = false;  // the second pass only when there is one
    for (std::uint64_t id : decode_) {
      const RequestState& r = row(id);
      if (r.output_tokens >= 1) add_decode(id, r, true);
      else prompt_ends = true;
    }
    if (prompt_ends)
      for (std::uint64_t id : decode_) {
        const RequestState& r = row(id);
        if (r.output_tokens < 1) add_decode(id, r, false);
      }
    return true;
  }
  return false;
}

void LightllmScheduler::schedule(Seconds now, StepPlan& plan) {
  if (!table_) broken("schedule before attach");
  report_pending_aborts(plan);
  admit();
  // A step that runs nothing (RunWay.PASS) is repeated without simulated time until something
  // runs: requests paused in it free their KV for the next; with every request paused, the
  // backend spins (20 ms a turn, not charged here) until the next recovery turn.
  const std::size_t guard = 4 * running_.size() + 8;
  for (std::size_t turn = 0;; ++turn) {
    if (turn > guard) broken("no step can run although requests are in the running batch");
    const std::size_t paused_before = plan.preempted.size();
    const bool recover_now = step_count_ % kLightllmRecoverInterval == 0;
    if (classify(plan, recover_now)) break;
    if (plan.preempted.size() > paused_before || last_recovered_ > 0) continue;  // memory freed, or requests back
    if (paused_count_ == 0) break;                       // nothing to run at all
    step_count_ = (step_count_ / kLightllmRecoverInterval + 1) * kLightllmRecoverInterval;  // spin to recovery
  }
  for (const ScheduledRequest& sr : plan.scheduled) {
    RequestState& r = row(sr.id);
    if (r.first_scheduled_s < 0) r.first_scheduled_s = now;
  }
}

void LightllmScheduler::complete_step(const StepPlan& plan, Seconds now, std::vector<std::uint64_t>& finished) {
  bool any_left = false;
  for (const ScheduledRequest& sr : plan.scheduled) {
    RequestState& r = row(sr.id);
    Slot& s = slots_[sr.id];
    if (r.status != RequestStatus::running)
      broken(fmt::format("request {} completed a step while not running", sr.id));
    if (s.pending != sr.new_tokens)
      broken(fmt::format("request {} completed {} tokens but {} were allocated", sr.id, sr.new_tokens, s.pending));
    r.computed_tokens += sr.new_tokens;
    s.pending = 0;
    if (!sr.samples) continue;
    ++r.output_tokens;
    if (r.first_token_s < 0) r.first_token_s = now;
    if (r.done()) {
      free_kv(sr.id);
      r.status = RequestStatus::finished;
      r.finish_s = now;
      finished.push_back(sr.id);
      any_left = true;
    }
  }
  if (any_left) std::erase_if(running_, [&](std::uint64_t id) { return row(id).status == RequestStatus::finished; });
}

void LightllmScheduler::release(std::uint64_t id) {
  pool_.release(id);  // throws if it still holds slots
  slots_.drop(id);
}

void LightllmScheduler::drop_step(const StepPlan& plan) {
  for (const ScheduledRequest& sr : plan.scheduled) {
    RequestState& r = row(sr.id);
    if (r.status != RequestStatus::running) continue;
    free_kv(sr.id);
    r.status = RequestStatus::aborted;
    slots_[sr.id].abort = LightllmAbort::dropped_step;
    std::erase(running_, sr.id);
  }
}

bool LightllmScheduler::has_work() const {
  return !waiting_.empty() || !running_.empty() || !pending_aborts_.empty();
}

std::int64_t LightllmScheduler::running() const {
  return static_cast<std::int64_t>(running_.size()) - paused_count_;
}

std::int64_t LightllmScheduler::waiting() const { return static_cast<std::int64_t>(waiting_.size()) + paused_count_; }

KvUsage LightllmScheduler::kv_usage() const {
  KvUsage u;
  u.capacity_tokens = pool_.size();
  u.used_tokens = pool_.used();
  u.cached_tokens = 0;
  return u;
}

void LightllmScheduler::check_invariants() const {
  pool_.check_invariants();
  // Ids index the live window of the slots: [base, slots_.end_id()).
  const std::uint64_t base = slots_.begin_id(), end = slots_.end_id();
  auto known = [this](std::uint64_t id) { return !slots_.dropped(id) && slots_[id].known; };
  const std::vector<int> in_waiting = queue_membership(waiting_, base, end, known, "LightllmScheduler", "waiting");
  const std::vector<int> in_running = queue_membership(running_, base, end, known, "LightllmScheduler", "running");
  Tokens held_sum = 0;
  std::int64_t paused = 0;
  for (std::uint64_t id = base; id < end; ++id) {
    if (!known(id)) continue;
    const Slot& s = slots_[id];
    const std::size_t i = id - base;
    const RequestState& r = row(id);
    const std::string name = fmt::format("request {}", id);
    const Tokens h = held(id);
    held_sum += h;
    switch (r.status) {
      case RequestStatus::waiting:
        if (in_waiting[i] != 1 || in_running[i] != 0) broken(name + " is waiting but not exactly once in the queue");
        if (h != 0 || r.computed_tokens != 0 || s.paused) broken(name + " is waiting but holds KV");
        break;
      case RequestStatus::preempted:
        ++paused;
        if (!s.paused || in_running[i] != 1 || in_waiting[i] != 0)
          broken(name + " is preempted but not paused in the running batch");
        if (h != 0 || r.computed_tokens != 0 || s.pending != 0) broken(name + " is paused but holds KV");
        break;
      case RequestStatus::running:
        if (s.paused || in_running[i] != 1 || in_waiting[i] != 0)
          broken(name + " is running but not exactly once in the running batch");
        if (h != r.computed_tokens + s.pending)
          broken(fmt::format("{} holds {} slots for {} computed + {} in flight", name, h, r.computed_tokens, s.pending));
        break;
      case RequestStatus::finished:
      case RequestStatus::aborted:
        if (in_waiting[i] != 0 || in_running[i] != 0) broken(name + " has left but is still queued");
        if (h != 0) broken(name + " has left but holds KV");
        if ((r.status == RequestStatus::aborted) != (s.abort != LightllmAbort::none))
          broken(name + " is aborted without a reason, or has a reason without being aborted");
        break;
    }
  }
  if (paused != paused_count_) broken(fmt::format("{} requests paused, counted {}", paused, paused_count_));
  if (held_sum != pool_.used()) broken(fmt::format("requests hold {} slots, the pool counts {}", held_sum, pool_.used()));
  if (static_cast<std::int64_t>(running_.size()) > limits_.running_max_req_size)
    broken(fmt::format("{} requests in the running batch, running_max_req_size is {}", running_.size(),
                       limits_.running_max_req_size));
}

}  // namespace headroom::engine
