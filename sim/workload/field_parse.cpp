#include "sim/workload/field_parse.hpp"

#include <charconv>
#include <cmath>

namespace headroom::workload {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool parse_scaled_ns(std::string_view text, double ns_per_unit, std::int64_t& out_ns) {
  if (text.empty() || text.front() == '-' || text.front() == '+') return false;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  if (!std::isfinite(v) || v < 0) return false;
  const double ns = std::round(v * ns_per_unit);
  if (ns > 9.2e18) return false;
  out_ns = static_cast<std::int64_t>(ns);
  return true;
}

}  // namespace

bool parse_u64(std::string_view text, std::uint64_t& out) {
  if (!all_digits(text)) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parse_token_count(std::string_view text, Tokens& out) {
  std::uint64_t v = 0;
  if (!parse_u64(text, v) || v > static_cast<std::uint64_t>(kMaxTokenCount)) return false;
  out = static_cast<Tokens>(v);
  return true;
}

bool parse_seconds_as_ns(std::string_view text, std::int64_t& out_ns) {
  return parse_scaled_ns(text, 1e9, out_ns);
}

bool parse_milliseconds_as_ns(std::string_view text, std::int64_t& out_ns) {
  std::uint64_t ms = 0;
  if (parse_u64(text, ms)) {  // the usual case: exact integer arithmetic
    if (ms > 9'200'000'000'000ull) return false;
    out_ns = static_cast<std::int64_t>(ms) * 1'000'000;
    return true;
  }
  return parse_scaled_ns(text, 1e6, out_ns);
}

}  // namespace headroom::workload
