#include <catch2/catch.hpp>

#include <string>

#include "sim/core/utf8.hpp"

using headroom::is_valid_utf8;

TEST_CASE("UTF-8 check accepts well-formed text of every length") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("H100 80GB"));
  CHECK(is_valid_utf8("\xc3\xa9"));          // U+00E9
  CHECK(is_valid_utf8("\xe2\x82\xac"));      // U+20AC
  CHECK(is_valid_utf8("\xf0\x9f\x98\x80"));  // U+1F600
  CHECK(is_valid_utf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF, the last code point
}

TEST_CASE("UTF-8 check refuses stray bytes, overlong forms, surrogates and truncation") {
  CHECK_FALSE(is_valid_utf8("m\xffy"));           // never valid in UTF-8
  CHECK_FALSE(is_valid_utf8("\x80"));             // continuation byte without a lead
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));         // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xe0\x80\xaf"));     // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));     // U+D800, a surrogate
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80")); // above U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xe2\x82"));         // cut short
}
