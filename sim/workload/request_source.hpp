#pragma once
// The pull interface every workload offers the simulator: one request at a time, so that a
// trace of millions of rows is never held in memory. Readers, synthetic generators and the
// transformations wrapped around them all implement it.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/request.hpp"

namespace headroom::workload {

// What a source (and the sources it wraps) read, skipped and changed. Counts only ever grow.
struct SourceStats {
  static constexpr std::size_t kMaxExamples = 5;

  std::uint64_t rows = 0;                 // data rows read from a file (header and blank lines excluded)
  std::uint64_t emitted = 0;              // requests handed out by the outermost source
  std::uint64_t bad_rows = 0;             // malformed rows skipped (skip_bad_rows)
  std::vector<std::string> bad_row_examples;  // the first kMaxExamples of their messages
  std::uint64_t zero_input_skipped = 0;   // rows with no prompt tokens: never replayable
  std::uint64_t zero_output_skipped = 0;  // rows with no output tokens (unless kept)
  std::uint64_t zero_output_kept = 0;     // ... kept as prefill-only requests (keep_zero_output)
  bool loaded_to_sort = false;            // the whole file was loaded to sort it by time
  std::uint64_t outside_window = 0;       // dropped before the time window starts
  std::uint64_t thinned = 0;              // dropped by a rate scale below 1
  std::uint64_t input_clipped = 0;        // prompts cut to the context limit
  std::uint64_t output_clipped = 0;       // outputs cut so prompt + output fit the context
  std::uint64_t dropped_too_long = 0;     // dropped because the prompt does not fit the context
};

// One line for a terminal or a log, e.g. "19366 rows read, 19364 requests; malformed rows
// skipped: 2 (first: trace.csv:7: ...)". Only the non-zero counts are named.
std::string describe(const SourceStats& stats);

class RequestSource {
 public:
  virtual ~RequestSource() = default;
  // Fills `r` with the next request (reusing its prefix_hashes storage) and returns true, or
  // returns false at the end. Arrival times never decrease.
  virtual bool next(Request& r) = 0;
  virtual SourceStats stats() const = 0;
};

}  // namespace headroom::workload
