// Fuzz target: a length-only CSV trace (the header put in front: `num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio`),
// through the real reader path (fuzz/support/trace_target.hpp).
#include "fuzz/support/trace_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return headroom::fuzz::fuzz_trace(data, size, headroom::workload::TraceFormat::length_csv,
                                    "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio");
}
