#include "sim/report/six_decimals.hpp"

#include <cmath>
#include <cstdint>
#include <string_view>

namespace headroom::report {

void write_six_decimals(TextWriter& out, double v) {
  if (std::signbit(v) || !(v < 1e9)) {
    out.print(FMT_COMPILE("{:.6f}"), v);
    return;
  }
  // v·10⁶ exactly is p + e: p the rounded product (below 2^53 here), e its rounding error, exact by
  // fma (the error of a rounded product is representable). floor(p) and f = p − floor(p) are exact,
  // and so is f − 0.5 (both multiples of p's ulp, under 1), so the sign of (f − 0.5) + e, which
  // rounding to nearest keeps, says whether v·10⁶ is above, below or at the half.
  const double p = v * 1e6;
  const double e = std::fma(v, 1e6, -p);
  const double whole = std::floor(p);
  const double above_half = (p - whole - 0.5) + e;
  auto n = static_cast<std::uint64_t>(whole);
  if (above_half > 0 || (above_half == 0 && n % 2 == 1)) ++n;
  // Integer part, '.', six digits.
  char buf[32];
  char* end = buf + sizeof buf;
  char* at = end;
  std::uint64_t fraction = n % 1000000;
  for (int i = 0; i < 6; ++i) {
    *--at = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  *--at = '.';
  std::uint64_t seconds = n / 1000000;
  do {
    *--at = static_cast<char>('0' + seconds % 10);
    seconds /= 10;
  } while (seconds > 0);
  out.write(std::string_view(at, static_cast<std::size_t>(end - at)));
}

}  // namespace headroom::report
