#include "sim/engine/token_kv_pool.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/core/error.hpp"

namespace headroom::engine {

TokenKvPool::TokenKvPool(Tokens size) : size_(size) {
  if (size < 1) throw InputError("LightLLM KV pool: size must be at least 1 token, got " + std::to_string(size));
}

bool TokenKvPool::alloc_first(RequestId id, Tokens n) {
  if (n < 0) throw std::logic_error("TokenKvPool: alloc of " + std::to_string(n) + " tokens");
  if (n > can_use_mem_size()) {
    ++counters_.failed_allocations;
    return false;
  }
  if (held_.dropped(id)) throw std::logic_error("TokenKvPool: request " + std::to_string(id) + " was released");
  held_.extend_to(id);
  if (held_[id] == kNotHeld) {
    held_[id] = 0;
    ++live_requests_;
  }
  held_[id] += n;
  add_used(n);
  return true;
}

Tokens TokenKvPool::free(RequestId id) {
  if (!held_.contains(id) || held_.dropped(id) || held_[id] == kNotHeld)
    throw std::logic_error("TokenKvPool: request " + std::to_string(id) + " holds no slots (double free?)");
  const Tokens n = held_[id];
  held_[id] = kNotHeld;
  used_ -= n;
  --live_requests_;
  ++counters_.frees;
  counters_.freed_tokens += static_cast<std::uint64_t>(n);
  return n;
}

Tokens TokenKvPool::tokens_of(RequestId id) const {
  return held_.contains(id) && !held_.dropped(id) && held_[id] != kNotHeld ? held_[id] : 0;
}

void TokenKvPool::release(RequestId id) {
  if (held_.contains(id) && !held_.dropped(id) && held_[id] != kNotHeld)
    throw std::logic_error("TokenKvPool: request " + std::to_string(id) + " released while holding slots");
  held_.drop(id);
}

void TokenKvPool::check_invariants() const {
  Tokens sum = 0;
  std::uint32_t live = 0;
  for (std::uint64_t id = held_.begin_id(); id < held_.end_id(); ++id) {
    if (held_.dropped(id) || held_[id] == kNotHeld) continue;
    if (held_[id] < 0) throw std::logic_error("TokenKvPool: request " + std::to_string(id) + " holds a negative count");
    sum += held_[id];
    ++live;
  }
  if (sum != used_) throw std::logic_error("TokenKvPool: requests hold " + std::to_string(sum) + " slots but " +
                                           std::to_string(used_) + " are counted used");
  if (live != live_requests_) throw std::logic_error("TokenKvPool: live request count is off");
  if (used_ > size_) throw std::logic_error("TokenKvPool: more slots used than the pool has");
  if (peak_used_ < used_) throw std::logic_error("TokenKvPool: peak below current use");
  if (counters_.allocated_tokens - counters_.freed_tokens != static_cast<std::uint64_t>(used_))
    throw std::logic_error("TokenKvPool: counters disagree with the slots in use");
}

}  // namespace headroom::engine
