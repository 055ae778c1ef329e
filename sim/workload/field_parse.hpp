#pragma once
// Parsing the numeric fields of trace rows: exact, locale-independent (std::from_chars), and
// strict (no signs, no trailing text), so that a malformed row is reported, not guessed at.
#include <cstdint>
#include <string_view>

#include "sim/workload/request.hpp"

namespace headroom::workload {

// No model has a context anywhere near a billion tokens; larger counts are corrupt data.
inline constexpr Tokens kMaxTokenCount = 1'000'000'000;

// Digits only, at most kMaxTokenCount. False otherwise.
bool parse_token_count(std::string_view text, Tokens& out);

// A non-negative decimal number of seconds ("5", "4.314579", "1e-3"), converted to integer
// nanoseconds by rounding (exact for up to 9 decimals below 10^7 s, within 1 ns beyond).
// False for text that is not a number, negative, infinite or NaN, or beyond 9.2e9 s.
bool parse_seconds_as_ns(std::string_view text, std::int64_t& out_ns);

// A non-negative integer number of milliseconds, or a decimal one, as integer nanoseconds.
bool parse_milliseconds_as_ns(std::string_view text, std::int64_t& out_ns);

// An unsigned 64-bit integer, digits only.
bool parse_u64(std::string_view text, std::uint64_t& out);

}  // namespace headroom::workload
