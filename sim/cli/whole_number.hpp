#pragma once
// A whole-number flag read exactly: CLI11's own conversion takes "-1" for an unsigned option as
// 2^64 - 1 and lets values past 2^64 through, so these flags parse their text themselves.
#include <charconv>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::cli {

inline std::uint64_t whole_number(const std::string& text, const char* flag, std::uint64_t lo, std::uint64_t hi) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text.front() == '-' || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    throw InputError(fmt::format("{}: expected a whole number from {} to {}, got '{}'", flag, lo, hi, text));
  return v;
}

}  // namespace headroom::cli
