#pragma once
// Writes a request stream as an Azure LLM inference trace (azure_csv.hpp), one row per request as
// it comes, so a trace of any length is written in fixed memory:
//   TIMESTAMP,ContextTokens,GeneratedTokens
//   2024-01-01 00:00:00.0000000,374,44
// Arrivals are rounded to the format's 100 ns ticks from `origin_ns` (a wall-clock time as
// parse_wall_clock_ns gives it); reading the file back gives the same lengths and those rounded
// arrival times. Prefix hashes are not part of the format and are not written.
#include <cstdint>
#include <ostream>

#include "sim/workload/request_source.hpp"

namespace headroom::workload {

// 2024-01-01 00:00:00 (any fixed origin; only differences matter to a reader).
inline constexpr std::int64_t kGeneratedTraceOriginNs = 1'704'067'200'000'000'000;

// Returns the number of rows written.
std::uint64_t write_azure_csv(RequestSource& source, std::ostream& out,
                              std::int64_t origin_ns = kGeneratedTraceOriginNs);

}  // namespace headroom::workload
