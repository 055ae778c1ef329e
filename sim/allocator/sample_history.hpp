#pragma once
// A snapshot the project generates itself: a few training-like steps (forward activations kept for
// backward, gradients, an optimizer update, the odd empty_cache) run through the allocator model with
// history recording on. It needs no data files and exercises both pools, splitting, merging, segment
// allocation and release, and a second stream.
#include <cstdint>

#include "sim/allocator/snapshot.hpp"

namespace headroom::alloc {

struct SampleHistoryOptions {
  std::uint64_t seed = 1;
  int steps = 6;
  int layers = 12;
  Bytes hidden_bytes_per_token = 4096 * 2;  // one bf16 hidden state row
  int tokens = 2048;
  Bytes capacity = 24 * GiB;
};

Snapshot make_sample_history(const SampleHistoryOptions& options);

}  // namespace headroom::alloc
