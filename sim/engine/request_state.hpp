#pragma once
// A request as the engine sees it while serving: its lengths, how far its prefill and decode have
// got, and the times the metrics need. Plain data, kept in the serving loop's RequestTable: rows by
// request id for the requests still live (id_window.hpp).
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/engine/id_window.hpp"
#include "sim/workload/request.hpp"

namespace headroom::engine {

using workload::Tokens;

enum class RequestStatus : std::uint8_t { waiting, running, preempted, finished, aborted };

struct RequestState {
  std::uint64_t id = 0;
  Seconds arrival_s = 0;
  Tokens prompt_tokens = 0;
  Tokens max_output_tokens = 0;              // the trace's output length: decoding stops there
  std::vector<std::uint64_t> prefix_hashes;  // Mooncake hash_ids (may be empty)
  Tokens prefix_block_tokens = 0;

  RequestStatus status = RequestStatus::waiting;
  Tokens computed_tokens = 0;  // tokens whose KV exists (prompt, then generated ones)
  Tokens cached_tokens = 0;    // of those, how many came from the prefix cache at admission
  Tokens output_tokens = 0;    // tokens generated so far
  int preemptions = 0;         // times preempted (recompute) or retracted

  Seconds first_scheduled_s = -1;
  Seconds first_token_s = -1;  // end of the step that produced the first output token
  Seconds finish_s = -1;

  // Tokens the request still has to run through the model before its next output token.
  Tokens remaining_prefill() const {
    Tokens target = prompt_tokens + output_tokens;  // after a preemption the outputs are recomputed too
    return computed_tokens < target ? target - computed_tokens : 0;
  }
  bool prefill_done() const { return remaining_prefill() == 0; }
  bool done() const { return output_tokens >= max_output_tokens; }
};

// The request table the serving loop owns and the scheduler reads: a row per id from the oldest
// request not yet reported to the newest arrival.
using RequestTable = IdWindow<RequestState>;

}  // namespace headroom::engine
