// The small parsers under the readers: wall-clock times, numbers, CSV fields, lines.
#include <catch2/catch.hpp>

#include "sim/workload/csv_split.hpp"
#include "sim/workload/field_parse.hpp"
#include "sim/workload/line_reader.hpp"
#include "sim/workload/wall_clock.hpp"
#include "tests/workload/test_files.hpp"

using namespace headroom::workload;

TEST_CASE("wall-clock times parse exactly to nanoseconds") {
  std::int64_t a = 0, b = 0;
  REQUIRE(parse_wall_clock_ns("1970-01-01 00:00:00", a));
  CHECK(a == 0);
  REQUIRE(parse_wall_clock_ns("2023-11-16 18:15:46.6805900", a));
  // 2023-11-16 is day 19,677 since 1970-01-01.
  CHECK(a == (19'677LL * 86'400 + 18 * 3'600 + 15 * 60 + 46) * 1'000'000'000LL + 680'590'000);
  REQUIRE(parse_wall_clock_ns("2023-11-16T19:14:08.402527", b));
  CHECK(b - a == 3'501'721'937'000LL);
  REQUIRE(parse_wall_clock_ns("2024-02-29 23:59:59.999999999", a));
  REQUIRE(parse_wall_clock_ns("2024-03-01 00:00:00", b));
  CHECK(b - a == 1);
  REQUIRE(parse_wall_clock_ns("2262-04-10 23:59:59", a));  // the last whole days 64-bit nanoseconds hold
  REQUIRE(parse_wall_clock_ns("1677-09-22 00:00:00", b));
  CHECK(b < 0);
  for (const char* bad : {"2023-02-29 00:00:00", "2023-11-16 24:00:00", "2023-11-16 18:60:00", "2023-13-01 00:00:00",
                          "2023-11-16 18:15", "2023-11-16 18:15:46,5", "2023-11-16 18:15:46.", "2023-11-16 18:15:46.5Z",
                          " 2023-11-16 18:15:46",
                          // beyond 64-bit nanoseconds since 1970 (found by fuzz/fuzz_trace_azure_csv)
                          "7257-11-16 18:15:46.6805900", "2262-04-12 00:00:00", "0001-01-01 00:00:00"}) {
    INFO(bad);
    CHECK_FALSE(parse_wall_clock_ns(bad, a));
  }
}

TEST_CASE("numeric fields are strict") {
  Tokens t = 0;
  CHECK(parse_token_count("0", t));
  CHECK(parse_token_count("1000000000", t));
  CHECK(t == 1'000'000'000);
  CHECK_FALSE(parse_token_count("1000000001", t));
  CHECK_FALSE(parse_token_count("+5", t));
  CHECK_FALSE(parse_token_count("5.0", t));
  CHECK_FALSE(parse_token_count("", t));
  std::int64_t ns = 0;
  CHECK(parse_seconds_as_ns("4.314579", ns));
  CHECK(ns == 4'314'579'000);
  CHECK(parse_seconds_as_ns("3435.948056", ns));
  CHECK(ns == 3'435'948'056'000);
  CHECK(parse_seconds_as_ns("5", ns));
  CHECK(ns == 5'000'000'000);
  CHECK_FALSE(parse_seconds_as_ns("-0.5", ns));
  CHECK_FALSE(parse_seconds_as_ns("1e300", ns));
  CHECK(parse_milliseconds_as_ns("3536999", ns));
  CHECK(ns == 3'536'999'000'000);
  CHECK(parse_milliseconds_as_ns("0.25", ns));
  CHECK(ns == 250'000);
}

TEST_CASE("CSV lines split into trimmed fields with quotes") {
  std::vector<std::string_view> f;
  REQUIRE(split_csv("a, b ,,\"c,d\" , \"e\"\"f\"", f));
  REQUIRE(f.size() == 5);
  CHECK(f[0] == "a");
  CHECK(f[1] == "b");
  CHECK(f[2] == "");
  CHECK(f[3] == "c,d");
  CHECK(f[4] == "e\"\"f");
  REQUIRE(split_csv("x,", f));
  CHECK(f.size() == 2);
  CHECK_FALSE(split_csv("1,\"open", f));
  CHECK(f.size() == 1);
  CHECK_FALSE(split_csv("\"a\"b,c", f));
  CHECK(f.size() == 0);
}

TEST_CASE("the line reader handles line ends, a last line without one, and unread") {
  const auto path = headroom::workload::test::write_file("lines", "l.txt", "one\r\ntwo\n\nthree");
  LineReader lines(path);
  std::string_view l;
  REQUIRE(lines.next(l));
  CHECK(l == "one");
  CHECK(lines.where() == path + ":1");
  lines.unread();
  REQUIRE(lines.next(l));
  CHECK(l == "one");
  CHECK(lines.line_number() == 1);
  REQUIRE(lines.next(l));
  CHECK(l == "two");
  REQUIRE(lines.next(l));
  CHECK(l.empty());
  REQUIRE(lines.next(l));
  CHECK(l == "three");
  CHECK(lines.line_number() == 4);
  CHECK_FALSE(lines.next(l));
}

TEST_CASE("lines longer than one buffer read are reassembled") {
  // Lines straddling the 1 MiB buffer boundary: 300 lines of 10,000 bytes = 3 MB.
  std::string content;
  for (int i = 0; i < 300; ++i) content += std::string(9'999, static_cast<char>('a' + i % 26)) + "\n";
  const auto path = headroom::workload::test::write_file("lines-big", "b.txt", content);
  LineReader lines(path);
  std::string_view l;
  int n = 0;
  bool ok = true;
  while (lines.next(l)) {
    ok &= l.size() == 9'999 && l.front() == 'a' + n % 26 && l.back() == 'a' + n % 26;
    ++n;
  }
  CHECK(n == 300);
  CHECK(ok);
}
