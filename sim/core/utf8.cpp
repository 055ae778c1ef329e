#include "sim/core/utf8.hpp"

#include <cstddef>
#include <cstdint>

namespace headroom {

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const auto b0 = static_cast<std::uint8_t>(text[i]);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    // RFC 3629 §4, UTF8-2 .. UTF8-4: the lead byte fixes the length and the range of the second byte.
    std::size_t length = 0;
    std::uint8_t lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) length = 2;
    else if (b0 == 0xE0) length = 3, lo = 0xA0;
    else if (b0 >= 0xE1 && b0 <= 0xEC) length = 3;
    else if (b0 == 0xED) length = 3, hi = 0x9F;  // no UTF-16 surrogates
    else if (b0 >= 0xEE && b0 <= 0xEF) length = 3;
    else if (b0 == 0xF0) length = 4, lo = 0x90;
    else if (b0 >= 0xF1 && b0 <= 0xF3) length = 4;
    else if (b0 == 0xF4) length = 4, hi = 0x8F;  // nothing above U+10FFFF
    else return false;
    if (n - i < length) return false;
    const auto b1 = static_cast<std::uint8_t>(text[i + 1]);
    if (b1 < lo || b1 > hi) return false;
    for (std::size_t k = 2; k < length; ++k) {
      const auto b = static_cast<std::uint8_t>(text[i + k]);
      if (b < 0x80 || b > 0xBF) return false;
    }
    i += length;
  }
  return true;
}

}  // namespace headroom
