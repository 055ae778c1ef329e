#include <catch2/catch.hpp>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

using namespace headroom;

TEST_CASE("format_size follows PyTorch's OOM message format") {
  CHECK(format_size(512) == "512 bytes");
  CHECK(format_size(1024) == "1024 bytes");
  CHECK(format_size(1025) == "1.00 KiB");
  CHECK(format_size(MiB) == "1024.00 KiB");
  CHECK(format_size(20 * MiB) == "20.00 MiB");
  CHECK(format_size(GiB) == "1024.00 MiB");
  CHECK(format_size(800000000ull * GiB) == "800000000.00 GiB");
}

TEST_CASE("parse_bytes accepts binary and decimal units") {
  CHECK(parse_bytes("4096", "x") == 4096);
  CHECK(parse_bytes("24GiB", "x") == 24 * GiB);
  CHECK(parse_bytes("80GB", "x") == 80'000'000'000ull);
  CHECK(parse_bytes("1.5 MiB", "x") == 1572864);
  CHECK_THROWS_WITH(parse_bytes("12 parsecs", "--capacity"),
                    Catch::Contains("--capacity: '12 parsecs' is not a byte size (unknown unit 'parsecs')"));
  CHECK_THROWS_AS(parse_bytes("", "x"), InputError);
  CHECK_THROWS_AS(parse_bytes("GiB", "x"), InputError);
}
