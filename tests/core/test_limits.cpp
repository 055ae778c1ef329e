// The core layer's input limits (sim/core/limits.hpp, docs/limits.md): whole-file reads capped in
// size, YAML capped in nodes and depth and held to one document, checked arithmetic, and running
// out of memory reported as what was being done.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "sim/core/checked.hpp"
#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/out_of_memory.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/yaml_load.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
namespace fs = std::filesystem;

TEST_CASE("a whole-file read refuses a file above the size limit before reading it") {
  const fs::path dir = test::temp_dir("limits");
  const fs::path big = dir / "big.yaml";
  {
    std::ofstream out(big, std::ios::binary);
    out.seekp(static_cast<std::streamoff>(limits::kMaxTextFileBytes + 1) - 1);  // a sparse file: no disk used
    out.put('\n');
  }
  CHECK_THROWS_WITH(read_text_file(big, "scenario"),
                    Catch::Contains("big.yaml: the scenario is 16.00 MiB (16777217 bytes), above the limit of 16.00 MiB"));
  // Exactly at the limit passes the size check (and then fails the text check: the bytes are NULs).
  fs::resize_file(big, limits::kMaxTextFileBytes);
  CHECK_THROWS_WITH(read_text_file(big, "scenario"), Catch::Contains("big.yaml:1:1: a NUL byte"));
  fs::remove_all(dir);
}

TEST_CASE("a whole-file read of a device is refused before a byte is read (run /dev/zero)") {
  if (!fs::exists("/dev/zero")) return;
  CHECK_THROWS_WITH(read_text_file("/dev/zero", "scenario", 1 << 20),
                    Catch::Contains("/dev/zero: is a character device, not a regular file; expected the scenario"));
}

TEST_CASE("YAML: a file of ten million empty lists stops at the node limit, not at 1.5 GB") {
  std::string text;
  text.reserve(10'000'000);
  while (text.size() < 10'000'000) text += "- []\n";
  CHECK_THROWS_WITH(load_yaml(text, "lists.yaml"),
                    Catch::Contains("lists.yaml:100000:3: more than 100000 YAML nodes") &&
                        Catch::Contains("docs/limits.md"));
  // One node short of the limit loads.
  std::string ok;
  for (std::size_t i = 1; i < limits::kMaxYamlNodes; ++i) ok += "- 1\n";
  CHECK(load_yaml(ok, "ok.yaml").size() == limits::kMaxYamlNodes - 1);
}

TEST_CASE("YAML: nesting beyond the depth limit is refused at its place") {
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  CHECK_THROWS_WITH(load_yaml(deep, "deep.yaml"), Catch::Contains("deep.yaml:1:65: lists and mappings nested more than 64"));
  const std::string fine = std::string(64, '[') + std::string(64, ']');
  CHECK(load_yaml(fine, "fine.yaml").IsSequence());
}

TEST_CASE("YAML: a second document is refused, naming the line of its ---") {
  CHECK_THROWS_WITH(load_yaml("a: 1\nb: 2\n---\nc: 3\n", "two.yaml"),
                    Catch::Contains("two.yaml:3:1: a second YAML document"));
  CHECK_THROWS_WITH(load_yaml("a: 1\n---\n", "empty_second.yaml"), Catch::Contains("empty_second.yaml:2:1"));
  // A leading '---' or a closing '...' is one document.
  CHECK(load_yaml("---\na: 1\n...\n", "one.yaml")["a"].as<int>() == 1);
  CHECK(load_yaml("", "empty.yaml").IsNull());
  CHECK_THROWS_WITH(load_yaml("a: [1, 2\n", "bad.yaml"), Catch::Contains("bad.yaml:") && Catch::Contains("not valid YAML"));
}

TEST_CASE("checked arithmetic reports overflow instead of wrapping") {
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  CHECK(checked_mul<std::int64_t>(1 << 20, 1 << 20) == std::int64_t{1} << 40);
  CHECK_FALSE(checked_mul<std::int64_t>(big / 2 + 1, 2));
  CHECK_FALSE(checked_add<std::int64_t>(big, 1));
  CHECK(checked_add<std::uint64_t>(1, 2) == 3u);
  CHECK(saturating_mul<std::uint64_t>(std::uint64_t{1} << 40, std::uint64_t{1} << 40) ==
        std::numeric_limits<std::uint64_t>::max());
  CHECK(saturating_mul<std::uint64_t>(6, 7) == 42u);
}

TEST_CASE("running out of memory names what was being done, as an input error") {
  auto fails = [] {
    return while_doing("reading the snapshot big.pickle", []() -> int { throw std::bad_alloc(); });
  };
  CHECK_THROWS_AS(fails(), InputError);
  CHECK_THROWS_WITH(fails(), Catch::StartsWith("out of memory while reading the snapshot big.pickle"));
  // The innermost step names itself; outer ones let its message through.
  auto nested = [] {
    return while_doing("running the command", [] {
      return while_doing("parsing the YAML of s.yaml", []() -> int { throw std::bad_alloc(); });
    });
  };
  CHECK_THROWS_WITH(nested(), Catch::StartsWith("out of memory while parsing the YAML of s.yaml"));
  CHECK(while_doing("adding", [] { return 2 + 2; }) == 4);
}
