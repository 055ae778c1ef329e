#include "sim/workload/request_source.hpp"

namespace headroom::workload {

std::string describe(const SourceStats& s) {
  std::string out = std::to_string(s.rows) + " rows read, " + std::to_string(s.emitted) + " requests";
  auto add = [&](std::uint64_t n, const char* what) {
    if (n > 0) out += std::string("; ") + what + ": " + std::to_string(n);
  };
  if (s.loaded_to_sort) out += "; loaded whole to sort by time";
  add(s.bad_rows, "malformed rows skipped");
  if (!s.bad_row_examples.empty()) out += " (first: " + s.bad_row_examples.front() + ")";
  add(s.zero_input_skipped, "rows with 0 input tokens skipped");
  add(s.zero_output_skipped, "rows with 0 output tokens skipped");
  add(s.zero_output_kept, "rows with 0 output tokens kept as prefill-only");
  add(s.outside_window, "before the time window");
  add(s.thinned, "thinned out by rate_scale");
  add(s.input_clipped, "prompts cut to the context");
  add(s.output_clipped, "outputs cut to the context");
  add(s.dropped_too_long, "dropped as longer than the context");
  return out;
}

}  // namespace headroom::workload
