#pragma once
// LightLLM's KV token pool (docs/serving-memory-model.md §3; LightLLM lightllm/common/mem_manager.py,
// newer kv_cache_mem_manager/): `size` token slots, no prefix cache. The KV tensor has size + 1
// rows: the extra one is HOLD_TOKEN_MEMINDEX (= size), where padded tokens write. Which slot a
// token gets changes no memory figure, so the pool counts slots per request.
//
// LightLLM's alloc asserts ("error alloc state") when asked for more than can_use_mem_size: its
// router admits only what fits. Here alloc returns false instead, so the simulator can report that
// crash rather than take it.
//
// Allocation-free once warm: the per-request ledger grows only when a larger request id than
// ever before arrives.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/engine/id_window.hpp"
#include "sim/engine/kv_request.hpp"

namespace headroom::engine {

class TokenKvPool {
 public:
  struct Counters {
    std::uint64_t allocations = 0;       // successful alloc calls
    std::uint64_t allocated_tokens = 0;
    std::uint64_t frees = 0;             // requests released
    std::uint64_t freed_tokens = 0;
    std::uint64_t failed_allocations = 0;
  };

  // Throws InputError unless size >= 1.
  explicit TokenKvPool(Tokens size);

  Tokens size() const { return size_; }
  Tokens tensor_rows() const { return size_ + 1; }  // + HOLD_TOKEN_MEMINDEX
  Tokens can_use_mem_size() const { return size_ - used_; }
  Tokens used() const { return used_; }
  Tokens peak_used() const { return peak_used_; }
  std::uint32_t num_requests() const { return live_requests_; }
  const Counters& counters() const { return counters_; }

  // n more slots for the request (n >= 0); false, with nothing changed, when fewer are free.
  // Inline for a request that already holds slots (every decode step); the rest out of line.
  bool alloc(RequestId id, Tokens n) {
    if (n >= 0 && n <= can_use_mem_size() && held_.contains(id)) {
      Tokens& held = held_[id];
      if (held != kNotHeld) {  // a released id's row stays kNotHeld (release() requires it)
        held += n;
        add_used(n);
        return true;
      }
    }
    return alloc_first(id, n);
  }
  // Releases every slot of the request (ReqManager frees req_to_token_indexs[req][:len]) and
  // returns how many. Throws std::logic_error for a request that holds nothing: a double free
  // would inflate can_use_mem_size.
  Tokens free(RequestId id);
  Tokens tokens_of(RequestId id) const;
  // The request is gone for good (it holds nothing): its id leaves the ledger, so the ledger
  // follows the live requests. std::logic_error if it holds slots.
  void release(RequestId id);

  // Throws std::logic_error when the ledger and the totals disagree or more is used than exists.
  void check_invariants() const;

 private:
  static constexpr Tokens kNotHeld = -1;
  bool alloc_first(RequestId id, Tokens n);  // alloc() for a request holding nothing yet, and its errors
  void add_used(Tokens n) {
    used_ += n;
    peak_used_ = std::max(peak_used_, used_);
    ++counters_.allocations;
    counters_.allocated_tokens += static_cast<std::uint64_t>(n);
  }
  Tokens size_;
  Tokens used_ = 0;
  Tokens peak_used_ = 0;
  IdWindow<Tokens> held_{kNotHeld};  // by request id: slots held, or kNotHeld
  std::uint32_t live_requests_ = 0;
  Counters counters_;
};

}  // namespace headroom::engine
