#pragma once
// What a scheduler decided for one engine step: which requests run and how many tokens each feeds
// through the model, plus what it preempted. The serving loop turns this into the step's allocation
// program (tokens T over sequences N, of which D are pure decodes) and its latency batch.
#include <cstdint>
#include <vector>

#include "sim/engine/request_state.hpp"

namespace headroom::engine {

struct ScheduledRequest {
  std::uint64_t id = 0;
  Tokens new_tokens = 0;     // tokens fed this step (a prefill chunk, or 1 for a decode)
  Tokens context_tokens = 0; // tokens already in the KV cache before this step
  bool is_decode = false;    // the request is past its prefill: this step makes its next token
  bool samples = false;      // the step ends with a sampled token for this request
};

struct StepPlan {
  std::vector<ScheduledRequest> scheduled;  // capacity kept between steps (no allocation)
  std::vector<std::uint64_t> preempted;     // requests preempted or retracted while planning
  // Requests the scheduler gave up on since the last plan (status aborted, KV freed): rejected on
  // arrival, or SGLang's last decode request that still does not fit. The serving loop reports
  // them; a plan may carry these and still be empty.
  std::vector<std::uint64_t> aborted;
  Tokens total_tokens = 0;
  std::int64_t decode_seqs = 0;

  void clear() {
    scheduled.clear();
    preempted.clear();
    aborted.clear();
    total_tokens = 0;
    decode_seqs = 0;
  }
  void add(const ScheduledRequest& r) {
    scheduled.push_back(r);
    total_tokens += r.new_tokens;
    if (r.is_decode) ++decode_seqs;
  }
  bool empty() const { return scheduled.empty(); }
  std::int64_t seqs() const { return static_cast<std::int64_t>(scheduled.size()); }
};

}  // namespace headroom::engine
