#pragma once
// How a trace file is read. Plain data; the scenario layer fills it from YAML.

namespace headroom::workload {

struct TraceOptions {
  // Sort rows by time. Without it, a row earlier than the previous one is an error. Sorting
  // needs every row at once, so only then is the whole file loaded into memory.
  bool sort = false;
  // Skip malformed rows, counting them (SourceStats::bad_rows) and keeping the first few
  // messages, instead of stopping at the first one with an InputError.
  bool skip_bad_rows = false;
  // Rows with 0 output tokens (BurstGPT's failed requests have "Response tokens" 0) are skipped
  // and counted by default: the trace does not say what the server did with them, and
  // BurstGPT's own "without_fails" files drop them too. With this set they are kept as
  // prefill-only requests (output_tokens 0). Rows with 0 input tokens are always skipped and
  // counted: no engine serves an empty prompt.
  bool keep_zero_output = false;
};

}  // namespace headroom::workload
