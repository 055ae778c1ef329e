// The streamed writers of the large outputs (requests.csv, timeline.csv, report.html's data) and the
// reader the report reads timelines back with: the rows as they were written before streaming, a
// text handed to the stream in chunks the same as kept whole, the integer fast path of the reader
// giving from_chars' doubles.
#include <catch2/catch.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/text_writer.hpp"
#include "sim/engine/startup_result.hpp"
#include "sim/report/csv_columns.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/run_report.hpp"
#include "sim/report/six_decimals.hpp"

using namespace headroom;
using namespace headroom::report;

TEST_CASE("requests.csv rows: six decimals, an unreached latency an empty cell") {
  TextWriter w;
  write_request_header(w);
  engine::RequestRecord done;
  done.id = 7;
  done.arrival_s = 1.5;
  done.prompt_tokens = 100;
  done.output_tokens = 20;
  done.cached_tokens = 16;
  done.preemptions = 1;
  done.queue_s = 0.25;
  done.ttft_s = 0.0000005;  // the double is just below 5e-7: rounds down, as printf's %.6f
  done.tpot_s = 0.0078125;  // 1/128: exactly half-way between 0.007812 and 0.007813
  done.e2e_s = 2.0000004;
  write_request_row(w, done);
  engine::RequestRecord dropped;  // arrived, never scheduled: every latency -1
  dropped.id = 8;
  dropped.arrival_s = 2;
  dropped.prompt_tokens = 5;
  dropped.aborted = true;
  write_request_row(w, dropped);
  CHECK(w.view() ==
        "id,arrival_s,prompt_tokens,output_tokens,cached_tokens,preemptions,queue_s,ttft_s,tpot_s,e2e_s,aborted\n"
        "7,1.500000,100,20,16,1,0.250000,0.000000,0.007812,2.000000,0\n"
        "8,2.000000,5,0,0,0,,,,,1\n");
}

TEST_CASE("a timeline streamed in chunks is the text kept whole, and reads back as written") {
  engine::StartupResult st;
  st.bytes.weights = 16LL << 30;
  st.bytes.kv_cache = 50LL << 30;
  std::vector<engine::TimelinePoint> t(3000);  // ~400 KB: several of the writer's 64 KiB chunks
  for (std::size_t i = 0; i < t.size(); ++i) {
    t[i].time_s = static_cast<double>(i) * 1.0000003;
    t[i].reserved = (70LL << 30) + (static_cast<Bytes>(i) << 20);
    t[i].allocated = t[i].reserved - (static_cast<Bytes>(i % 7) << 20);
    t[i].kv_used_tokens = static_cast<std::int64_t>(i) * 13;
  }
  TextWriter whole;
  write_timeline_csv(whole, st, t);
  std::ostringstream streamed;
  write_timeline_csv(streamed, st, t);
  CHECK(streamed.str() == whole.view());
  const CsvColumns c = parse_csv_columns(streamed.str(), "timeline.csv");
  REQUIRE(c.rows() == t.size());
  CHECK(c.column("time_s")[2999] == 2999.000900);  // written with six decimals
  CHECK(c.column("weights_bytes")[5] == static_cast<double>(16LL << 30));
  CHECK(c.column("reserved_bytes")[2999] == static_cast<double>(t[2999].reserved));
  CHECK(c.column("cached_free_bytes")[13] == static_cast<double>(6LL << 20));
  CHECK(c.column("kv_used_tokens")[100] == 1300);
}

TEST_CASE("CSV cells of up to 15 digits read as integers: the doubles from_chars gives") {
  const std::vector<std::string> cells = {"0", "007", "42", "999999999999999", "9007199254740993",
                                          "18446744073709551615", "1.5", "-3", "1e3", "0.000001"};
  std::string text = "v\n";
  for (const std::string& c : cells) text += c + "\n";
  const CsvColumns csv = parse_csv_columns(text, "cells.csv");
  REQUIRE(csv.rows() == cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    double expected = 0;
    std::from_chars(cells[i].data(), cells[i].data() + cells[i].size(), expected);
    CHECK(csv.column("v")[i] == expected);
  }
  CHECK(csv.column("v")[3] == 999999999999999.0);
  // Not numbers, whatever their digits: a sign, a space.
  CHECK_THROWS_WITH(parse_csv_columns("v\n+5\n", "plus.csv"), Catch::Contains("plus.csv:2: column 1 (v): expected a finite number, got '+5'"));
  CHECK_THROWS_WITH(parse_csv_columns("a,b\n1,2 \n", "space.csv"), Catch::Contains("space.csv:2: column 2 (b)"));
  CHECK_THROWS_WITH(parse_csv_columns("a,b\n1,2\n\n3\n", "blank.csv"), Catch::Contains("blank.csv:4: expected 2 cells, got 1"));
  // A row of the wrong length is named as such, whatever its cells hold.
  CHECK_THROWS_WITH(parse_csv_columns("a,b\nx,1,2\n", "long.csv"), Catch::Contains("long.csv:2: expected 2 cells, got 3"));
  CHECK_THROWS_WITH(parse_csv_columns("a,b,c\nx,1\n", "short.csv"), Catch::Contains("short.csv:2: expected 3 cells, got 2"));
}

TEST_CASE("report data: escapes written in runs, other UTF-8 left as it is") {
  // U+20AC (E2 82 AC) shares the separators' lead byte and stays; U+2029 last in the text.
  const nlohmann::json j = {{"a", "\xE2\x82\xAC<b>&\xE2\x80\xA9"}};
  CHECK(json_for_script(j) == "{\"a\":\"\xE2\x82\xAC\\u003cb\\u003e\\u0026\\u2029\"}");
}

TEST_CASE("six decimals as fmt's {:.6f}: nearest to the exact value, ties to even") {
  std::vector<double> values = {0.0, -0.0, 1e-300, 5e-7, 4.9999999999999999e-7, 0.0000015, 0.0078125, 0.0234375,
                                0.5, 1.0000005, 2.5e-6, 999999999.9999995, 1e9, 1e12, -1.5, 123.456789,
                                std::nextafter(0.0000005, 1.0), std::nan(""), INFINITY};
  // Exact ties (odd multiples of 1/128), and their neighbours one ulp away.
  for (int m = 1; m < 4000; m += 2) {
    const double t = m / 128.0 + 1024 * m;
    values.insert(values.end(), {t, std::nextafter(t, 0.0), std::nextafter(t, 1e10)});
  }
  // Random values over every scale the outputs hold, from microseconds to a year of seconds.
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 40000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const double unit = static_cast<double>(x >> 11) / 9007199254740992.0;
    values.push_back(unit * std::pow(10.0, static_cast<double>(i % 15) - 6));
  }
  std::size_t differ = 0;
  for (const double v : values) {
    TextWriter w;
    write_six_decimals(w, v);
    if (w.view() != fmt::format("{:.6f}", v)) {
      ++differ;
      UNSCOPED_INFO(fmt::format("{:.17g}: {} vs {:.6f}", v, w.view(), v));
    }
  }
  CHECK(differ == 0);
}

namespace {

// report.html's data as it was written before it was streamed: nlohmann's dump(-1), then the
// script escapes.
std::string dumped_for_script(const nlohmann::json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9'))
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029", i += 2;
    else out += c;
  }
  return out;
}

}  // namespace

TEST_CASE("report data written as it goes: the bytes of nlohmann's dump, escaped") {
  nlohmann::json data = {
      {"kind", "run"}, {"title", "a <b> & \"c\"\n\t\xE2\x80\xA8 caf\xC3\xA9 \xFF bad"},
      {"views", {{{"x", {0.0, -0.0, 0.5, 1e-7, 1e15, 1e16, -3.0, 123456789012345.0, 1.0 / 3, std::nan(""), -INFINITY}}},
                 {{"n", {-1, 0, 42}}, {"u", {0u, 18446744073709551615ull}}, {"flag", true}, {"none", nullptr}},
                 nlohmann::json::object(), nlohmann::json::array()}},
      {"\xE2\x80\xA9key<", {{"nested", {{"deeper", {1.5, "s"}}}}}}};
  CHECK(json_for_script(data) == dumped_for_script(data));
}

TEST_CASE("whole numbers below 10^15 as nlohmann writes them, without its Grisu2") {
  std::vector<double> values;
  for (int i = 0; i < 2000; ++i) values.insert(values.end(), {double(i), -double(i)});
  for (int e = 0; e <= 53; ++e)
    for (double d : {-2.0, -1.0, 0.0, 1.0, 2.0}) values.push_back(std::ldexp(1.0, e) + d);
  for (double p = 1; p <= 1e15; p *= 10)
    for (double d : {-1.0, 0.0, 1.0}) values.push_back(p + d);
  std::uint64_t x = 0x2545F4914F6CDD1Dull;
  for (int i = 0; i < 8000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    values.push_back(static_cast<double>(x % (std::uint64_t{1} << (10 + i % 40))));  // every scale up to 2^49
  }
  std::size_t differ = 0;
  for (const double v : values) {
    TextWriter w;
    write_json_double(w, v);
    const std::string expected = nlohmann::json(v).dump();
    if (w.view() != expected) {
      ++differ;
      UNSCOPED_INFO(fmt::format("{:.17g}: {} vs {}", v, w.view(), expected));
    }
  }
  CHECK(differ == 0);
}
