#pragma once
// Wall-clock timestamps such as the Azure LLM inference traces' "2023-11-16 18:15:46.6805900"
// (7 fractional digits, 100 ns resolution, no time zone). Parsed by hand to integer nanoseconds
// so that differences are exact; no time zone, locale or C library time function is involved.
#include <cstdint>
#include <string>
#include <string_view>

namespace headroom::workload {

// "YYYY-MM-DD HH:MM:SS" (a 'T' may replace the space) with an optional "." and 1 to 9
// fractional digits, to nanoseconds since 1970-01-01 00:00:00 of the same (unnamed) zone.
// False when the text has another shape or a field is out of range (month 13, 30 February, ...),
// or the time is beyond what 64-bit nanoseconds since 1970 hold (before 1677 or after 2262).
bool parse_wall_clock_ns(std::string_view text, std::int64_t& out_ns);

// The inverse at the Azure traces' resolution: nanoseconds since 1970-01-01 (a multiple of 100,
// not negative) as "YYYY-MM-DD HH:MM:SS.fffffff". std::logic_error otherwise.
std::string format_wall_clock_ns(std::int64_t ns);

}  // namespace headroom::workload
