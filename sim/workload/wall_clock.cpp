#include "sim/workload/wall_clock.hpp"

#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace headroom::workload {

namespace {

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : kDays[m - 1];
}

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil algorithm, http://howardhinnant.github.io/date_algorithms.html).
std::int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return std::int64_t{era} * 146097 + doe - 719468;
}

// The inverse (H. Hinnant's civil_from_days, same page).
void civil_from_days(std::int64_t z, int& y, int& m, int& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<int>(z - era * 146097);
  const int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int>(yoe + era * 400) + (m <= 2);
}

}  // namespace

std::string format_wall_clock_ns(std::int64_t ns) {
  if (ns < 0 || ns % 100 != 0) throw std::logic_error(fmt::format("format_wall_clock_ns: {} ns", ns));
  const std::int64_t seconds = ns / 1'000'000'000, ticks = ns % 1'000'000'000 / 100;
  int y = 0, m = 0, d = 0;
  civil_from_days(seconds / 86400, y, m, d);
  const std::int64_t s = seconds % 86400;
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:07}", y, m, d, s / 3600, s / 60 % 60, s % 60, ticks);
}

bool parse_wall_clock_ns(std::string_view s, std::int64_t& out_ns) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (s.size() < 19 || !digits(s, 0, 4, y) || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d) || (s[10] != ' ' && s[10] != 'T') || !digits(s, 11, 2, h) || s[13] != ':' ||
      !digits(s, 14, 2, mi) || s[16] != ':' || !digits(s, 17, 2, se))
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59) return false;
  std::int64_t frac_ns = 0;
  if (s.size() > 19) {
    const std::size_t n = s.size() - 20;
    if (s[19] != '.' || n < 1 || n > 9) return false;
    int f = 0;
    if (!digits(s, 20, n, f)) return false;
    frac_ns = f;
    for (std::size_t i = n; i < 9; ++i) frac_ns *= 10;
  }
  const std::int64_t seconds = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
  // Nanoseconds since 1970 fit 64 bits from 1677-09-21 to 2262-04-11; outside, the time has no value.
  constexpr std::int64_t kLimit = std::numeric_limits<std::int64_t>::max() / 1'000'000'000 - 1;
  if (seconds > kLimit || seconds < -kLimit) return false;
  out_ns = seconds * 1'000'000'000 + frac_ns;
  return true;
}

}  // namespace headroom::workload
