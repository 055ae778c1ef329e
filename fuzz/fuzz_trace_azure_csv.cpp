// Fuzz target: an Azure CSV trace (the header put in front: `TIMESTAMP,ContextTokens,GeneratedTokens`),
// through the real reader path (fuzz/support/trace_target.hpp).
#include "fuzz/support/trace_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return headroom::fuzz::fuzz_trace(data, size, headroom::workload::TraceFormat::azure_csv,
                                    "TIMESTAMP,ContextTokens,GeneratedTokens");
}
