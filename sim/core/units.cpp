#include "sim/core/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom {

std::string format_size(Bytes n) {
  // c10/util/... format_size: thresholds <=1024 bytes, <=1 MiB, <=1 GiB, else GiB.
  if (n <= 1024) return fmt::format("{} bytes", n);
  if (n <= MiB) return fmt::format("{:.2f} KiB", static_cast<double>(n) / 1024.0);
  if (n <= GiB) return fmt::format("{:.2f} MiB", static_cast<double>(n) / 1024.0 / 1024.0);
  return fmt::format("{:.2f} GiB", static_cast<double>(n) / 1024.0 / 1024.0 / 1024.0);
}

std::string format_bytes(Bytes n) {
  if (n < KiB) return fmt::format("{} B", n);
  if (n < MiB) return fmt::format("{:.2f} KiB", static_cast<double>(n) / static_cast<double>(KiB));
  if (n < GiB) return fmt::format("{:.2f} MiB", static_cast<double>(n) / static_cast<double>(MiB));
  return fmt::format("{:.2f} GiB", static_cast<double>(n) / static_cast<double>(GiB));
}

Bytes parse_bytes(std::string_view text, std::string_view what) {
  auto fail = [&](std::string_view why) -> Bytes {
    throw InputError(fmt::format("{}: '{}' is not a byte size ({}); expected e.g. 4096, 512MiB, 24GiB, 80GB",
                                 what, text, why));
  };
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && text[i] == '-') return fail("negative");
  size_t start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == start) return fail("no number");
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + i, value);
  if (ec != std::errc() || ptr != text.data() + i) return fail("bad number");
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit;
  for (; i < text.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) break;
    unit.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(text[i]))));
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i != text.size()) return fail("trailing text");
  double mult = 1;
  if (unit.empty() || unit == "b") mult = 1;
  else if (unit == "kib" || unit == "k") mult = 1024.0;
  else if (unit == "mib" || unit == "m") mult = 1024.0 * 1024;
  else if (unit == "gib" || unit == "g") mult = 1024.0 * 1024 * 1024;
  else if (unit == "tib" || unit == "t") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "kb") mult = 1e3;
  else if (unit == "mb") mult = 1e6;
  else if (unit == "gb") mult = 1e9;
  else if (unit == "tb") mult = 1e12;
  else return fail("unknown unit '" + unit + "'");
  double bytes = value * mult;
  if (!std::isfinite(bytes) || bytes >= 18446744073709551615.0) return fail("too large");
  return static_cast<Bytes>(std::llround(bytes));
}

}  // namespace headroom
