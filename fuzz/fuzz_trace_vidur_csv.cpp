// Fuzz target: a Vidur CSV trace (the header put in front: `arrived_at,num_prefill_tokens,num_decode_tokens`),
// through the real reader path (fuzz/support/trace_target.hpp).
#include "fuzz/support/trace_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return headroom::fuzz::fuzz_trace(data, size, headroom::workload::TraceFormat::vidur_csv,
                                    "arrived_at,num_prefill_tokens,num_decode_tokens");
}
