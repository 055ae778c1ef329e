// The snapshot readers' limits (sim/allocator/snapshot_limits.hpp, docs/limits.md): every count
// the unpickler holds is capped, so a hostile file stops with an error naming the byte, and
// overlapping segments are refused naming both. Small caps stand in for the real ones.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/allocator/pickle_reader.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/allocator/snapshot_limits.hpp"
#include "sim/core/error.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::alloc;
namespace fs = std::filesystem;

namespace {

const std::string kProto = "\x80\x04";

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

pickle::ParseLimits small() {
  pickle::ParseLimits l;
  l.values = 1000;
  l.items = 500;
  l.sparse_memo = 10;
  return l;
}

// A JSON snapshot of two one-block segments on `devices`, at `a` and `b`, `size` bytes each.
std::string two_segments(std::uint64_t a, std::uint64_t b, std::uint64_t size, int device_b = 0) {
  auto segment = [&](std::uint64_t at, int device) {
    return "{\"device\": " + std::to_string(device) + ", \"address\": " + std::to_string(at) +
           ", \"total_size\": " + std::to_string(size) +
           ", \"allocated_size\": 0, \"active_size\": 0, \"requested_size\": 0, \"stream\": 0, "
           "\"segment_type\": \"large\", \"blocks\": [{\"address\": " +
           std::to_string(at) + ", \"size\": " + std::to_string(size) +
           ", \"requested_size\": 0, \"state\": \"inactive\"}]}";
  };
  return "{\"segments\": [" + segment(a, 0) + ", " + segment(b, device_b) + "]}";
}

}  // namespace

TEST_CASE("pickle: a flood of EMPTY_LIST stops at the value limit, at its byte") {
  const std::string bytes = kProto + repeat("]", 1001) + ".";
  CHECK_THROWS_WITH(pickle::parse(bytes, "lists.pickle", small()),
                    Catch::Contains("lists.pickle: byte 1002: more than 1000 values, above the limit for a snapshot"));
  CHECK(pickle::parse(kProto + repeat("]", 999) + ".", "ok.pickle", small()).size() == 999);
}

TEST_CASE("pickle: the stack, MARKs and the memo are capped too") {
  CHECK_THROWS_WITH(pickle::parse(kProto + "]" + repeat("2", 1000) + ".", "dup.pickle", small()),
                    Catch::Contains("DUP: more than 1000 values on the pickle's stack"));
  CHECK_THROWS_WITH(pickle::parse(kProto + repeat("(", 1001) + ".", "mark.pickle", small()),
                    Catch::Contains("MARK: more than 1000 open MARKs"));
  CHECK_THROWS_WITH(pickle::parse(kProto + "]" + repeat("\x94", 1001) + ".", "memo.pickle", small()),
                    Catch::Contains("MEMOIZE: more than 1000 memo entries"));
  // LONG_BINPUT at indices Python never writes: a hash map, capped small.
  std::string sparse = kProto + "]";
  for (int i = 0; i < 11; ++i) sparse += std::string("r") + static_cast<char>(i) + std::string("\x00\x00\x10", 3);
  CHECK_THROWS_WITH(pickle::parse(sparse + ".", "sparse.pickle", small()),
                    Catch::Contains("LONG_BINPUT: more than 10 memo entries out of Python's order"));
  CHECK_THROWS_WITH(pickle::parse(kProto + "]" + repeat("Na", 501) + ".", "items.pickle", small()),
                    Catch::Contains("more than 500 items in lists and dicts"));
}

TEST_CASE("pickle: memo entries in Python's order still read back") {
  // [x, x] through the memo: EMPTY_LIST MEMOIZE (index 0) ... BINGET 0.
  const std::string bytes = kProto + "]\x94" + "(N\x94h\x01" + "h\x01" + "e.";
  const pickle::Tree t = pickle::parse(bytes, "memo.pickle");
  REQUIRE(t.kind(t.root()) == pickle::Kind::List);
  CHECK(t.items(t.root()).size() == 3);
}

TEST_CASE("snapshot: overlapping segments of one device are refused, naming both") {
  const std::uint64_t base = std::uint64_t{0x7f} << 40;
  CHECK_THROWS_WITH(read_snapshot_json(two_segments(base, base + (1 << 20), 2 << 20), "overlap.json"),
                    Catch::Contains("overlap.json: segments[1]: the segment at 0x7f0000100000 (2097152 bytes, device 0) "
                                    "overlaps segments[0] at 0x7f0000000000 (2097152 bytes, to 0x7f0000200000)"));
  // Adjacent segments, and the same addresses on two devices, are fine.
  CHECK(read_snapshot_json(two_segments(base, base + (2 << 20), 2 << 20), "adjacent.json").segments.size() == 2);
  CHECK(read_snapshot_json(two_segments(base, base, 2 << 20, 1), "devices.json").segments.size() == 2);
}

TEST_CASE("snapshot: a segment running past the 64-bit address space is refused") {
  const std::uint64_t top = ~std::uint64_t{0} - 1023;
  CHECK_THROWS_WITH(read_snapshot_json(two_segments(top, 0, 2048), "wrap.json"),
                    Catch::Contains("wrap.json: segments[0].total_size: 2048 bytes from 0xfffffffffffffc00 run past"));
}

TEST_CASE("snapshot: a file above the size limit is refused before it is read") {
  const fs::path dir = test::temp_dir("snapshot-limits");
  const fs::path big = dir / "big.pickle";
  { std::ofstream out(big, std::ios::binary); }
  fs::resize_file(big, limits::kMaxSnapshotBytes + 1);  // sparse: no disk used
  CHECK_THROWS_WITH(read_snapshot(big), Catch::Contains("big.pickle: the snapshot is 512.00 MiB (536870913 bytes), above "
                                                        "the limit of 512.00 MiB"));
  fs::remove_all(dir);
}
