#pragma once
// The body of the five trace-format targets (fuzz_trace_<format>.cpp): the input is a trace file,
// read through the real path (open_trace on a file: LineReader, format detection, the format's
// row parser, the shared ordering and zero-length rules). An input whose first line is not this
// format's gets the format's canonical first line put in front, so each target's mutations stay
// in its own row parser. The reader options come from the input's last byte.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/support/finding.hpp"
#include "fuzz/support/scratch_file.hpp"
#include "sim/core/error.hpp"
#include "sim/workload/open_trace.hpp"
#include "sim/workload/trace_format.hpp"

namespace headroom::fuzz {

inline bool first_line_is(std::string_view text, workload::TraceFormat format) {
  std::string_view first = text.substr(0, text.find('\n'));
  if (!first.empty() && first.back() == '\r') first.remove_suffix(1);
  try {
    return workload::detect_format(first, "fuzz") == format;
  } catch (const InputError&) {
    return false;
  }
}

// `lead`: the first line put in front of an input that does not start as this format does.
inline int fuzz_trace(const std::uint8_t* data, std::size_t size, workload::TraceFormat format,
                      std::string_view lead) {
  std::string_view input = as_text(data, size);
  std::string file;
  if (!first_line_is(input, format)) {
    file.append(lead);
    file.push_back('\n');
  }
  file.append(input);

  workload::TraceOptions options;
  const unsigned bits = size ? data[size - 1] : 0u;
  options.sort = bits & 1u;
  options.skip_bad_rows = bits & 2u;
  options.keep_zero_output = bits & 4u;

  try {
    auto reader = workload::open_trace(scratch().write("trace", file), options);
    require(reader->format() == format, "the reader's format is not the one detected");
    workload::Request r;
    std::uint64_t count = 0;
    double previous = 0.0;
    while (reader->next(r)) {
      require(r.id == count, "request ids are not 0, 1, 2, ...");
      require(std::isfinite(r.arrival_s) && r.arrival_s >= 0.0, "an arrival time is negative or not finite");
      if (!reader->has_arrival_times()) require(r.arrival_s == 0.0, "an untimed trace has a non-zero arrival");
      require(r.arrival_s >= previous, "arrival times decrease");
      require(r.input_tokens > 0, "a request with no prompt tokens was handed out");
      require(r.output_tokens > 0 || (options.keep_zero_output && r.output_tokens == 0),
              "a request with no (or negative) output tokens was handed out");
      require(r.prefix_hashes.empty() || r.prefix_block_tokens > 0, "prefix hashes without a block size");
      previous = r.arrival_s;
      ++count;
    }
    const workload::SourceStats stats = reader->stats();
    require(stats.rows >= count, "more requests than rows");
    (void)workload::describe(stats);
  } catch (const InputError&) {
    // a malformed trace: the expected outcome
  }
  return 0;
}

}  // namespace headroom::fuzz
