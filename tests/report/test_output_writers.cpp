// The streamed writers of the large outputs (requests.csv, timeline.csv, report.html's data) and the
// reader the report reads timelines back with: the rows as they were written before streaming, a
// text handed to the stream in chunks the same as kept whole, the integer fast path of the reader
// giving from_chars' doubles.
#include <catch2/catch.hpp>

#include <charconv>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/text_writer.hpp"
#include "sim/engine/startup_result.hpp"
#include "sim/report/csv_columns.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/run_report.hpp"

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
}

TEST_CASE("report data: escapes written in runs, other UTF-8 left as it is") {
  // U+20AC (E2 82 AC) shares the separators' lead byte and stays; U+2029 last in the text.
  const nlohmann::json j = {{"a", "\xE2\x82\xAC<b>&\xE2\x80\xA9"}};
  CHECK(json_for_script(j) == "{\"a\":\"\xE2\x82\xAC\\u003cb\\u003e\\u0026\\u2029\"}");
}
