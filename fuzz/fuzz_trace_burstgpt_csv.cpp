// Fuzz target: a BurstGPT CSV trace (the header put in front: `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`),
// through the real reader path (fuzz/support/trace_target.hpp).
#include "fuzz/support/trace_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return headroom::fuzz::fuzz_trace(data, size, headroom::workload::TraceFormat::burstgpt_csv,
                                    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type");
}
