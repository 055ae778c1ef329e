// gunzip (sim/core/gzip.hpp): what it reads (one member, several, zero padding) and the exact error
// for each way a gzip file goes wrong (truncated, a bad CRC-32, a bad length, garbage after the end,
// more output than the limit).
#include <catch2/catch.hpp>

#include <string>

#include "sim/core/error.hpp"
#include "sim/core/gzip.hpp"
#include "tests/support/gzip_data.hpp"

using namespace headroom;

namespace {

const std::string kText = "{\"segments\": [], \"device_traces\": [[]]}\n";

}  // namespace

TEST_CASE("gunzip: one member, concatenated members and zero padding read as gzip reads them") {
  const std::string gz = test::gzip(kText);
  CHECK(is_gzip(gz));
  CHECK_FALSE(is_gzip(kText));
  CHECK(gunzip(gz, 1 << 20, "a.gz", "the limit") == kText);
  CHECK(gunzip(gz + test::gzip("second"), 1 << 20, "a.gz", "the limit") == kText + "second");
  CHECK(gunzip(gz + std::string(7, '\0'), 1 << 20, "a.gz", "the limit") == kText);
  CHECK(gunzip(test::gzip(""), 1 << 20, "a.gz", "the limit").empty());
}

TEST_CASE("gunzip: a truncated file names where it ends") {
  const std::string gz = test::gzip(kText);
  // Without its 8-byte trailer (CRC-32, length), then cut inside the deflate data.
  CHECK_THROWS_WITH(gunzip(gz.substr(0, gz.size() - 8), 1 << 20, "cut.gz", "the limit"),
                    "cut.gz: the gzip data is truncated: it ends after " + std::to_string(gz.size() - 8) +
                        " compressed bytes, inside a member, before its CRC-32 and length trailer");
  CHECK_THROWS_WITH(gunzip(gz.substr(0, 15), 1 << 20, "cut.gz", "the limit"),
                    "cut.gz: the gzip data is truncated: it ends after 15 compressed bytes, inside a member, "
                    "before its CRC-32 and length trailer");
}

TEST_CASE("gunzip: a corrupt CRC-32 or length is zlib's check error, at its byte") {
  std::string gz = test::gzip(kText);
  std::string bad_crc = gz;
  bad_crc[gz.size() - 8] = static_cast<char>(bad_crc[gz.size() - 8] ^ 0x01);
  CHECK_THROWS_WITH(gunzip(bad_crc, 1 << 20, "crc.gz", "the limit"),
                    "crc.gz: corrupt gzip data near compressed byte " + std::to_string(gz.size() - 4) +
                        ": incorrect data check");
  std::string bad_length = gz;
  bad_length[gz.size() - 4] = static_cast<char>(bad_length[gz.size() - 4] ^ 0x01);
  CHECK_THROWS_WITH(gunzip(bad_length, 1 << 20, "len.gz", "the limit"),
                    "len.gz: corrupt gzip data near compressed byte " + std::to_string(gz.size()) +
                        ": incorrect length check");
  std::string bad_method = gz;
  bad_method[2] = 7;  // compression method 7 (only 8, deflate, exists)
  CHECK_THROWS_WITH(gunzip(bad_method, 1 << 20, "m.gz", "the limit"),
                    "m.gz: corrupt gzip data near compressed byte 4: unknown compression method");
}

TEST_CASE("gunzip: bytes after the last member, and a file that is not gzip, are refused") {
  const std::string gz = test::gzip(kText);
  CHECK_THROWS_WITH(gunzip(gz + "junk", 1 << 20, "tail.gz", "the limit"),
                    "tail.gz: 4 bytes after the end of the gzip data at byte " + std::to_string(gz.size()) +
                        " are not another gzip member");
  CHECK_THROWS_WITH(gunzip(kText, 1 << 20, "plain.gz", "the limit"),
                    "plain.gz: not a gzip file (it does not start with 1f 8b)");
}

TEST_CASE("gunzip: a decompression bomb stops at the limit, before more memory is taken") {
  // 64 MiB of zeros are ~65 KB of gzip; the limit is 1 MiB.
  const std::string bomb = test::gzip(std::string(std::size_t{64} << 20, '\0'));
  CHECK(bomb.size() < 100'000);
  CHECK_THROWS_WITH(gunzip(bomb, 1 << 20, "bomb.gz", "the limit for one snapshot"),
                    "bomb.gz: the gzip data decompresses to more than 1.00 MiB (1048576 bytes), the limit for one "
                    "snapshot (docs/limits.md)");
  CHECK(gunzip(test::gzip(std::string(1 << 20, 'x')), 1 << 20, "full.gz", "the limit").size() == (1u << 20));
}
