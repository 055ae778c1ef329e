// Fuzz target: a Mooncake JSONL trace (one JSON object per line; the first line put in front is a valid request),
// through the real reader path (fuzz/support/trace_target.hpp).
#include "fuzz/support/trace_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return headroom::fuzz::fuzz_trace(data, size, headroom::workload::TraceFormat::mooncake_jsonl,
                                    "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 10, \"hash_ids\": [0, 1]}");
}
