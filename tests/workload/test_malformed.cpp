// Malformed inputs: every message is asserted in full (file, line, column, what was expected).
#include <catch2/catch.hpp>

#include <filesystem>

#include "sim/core/error.hpp"
#include "sim/workload/open_trace.hpp"
#include "tests/workload/test_files.hpp"

using namespace headroom;
using namespace headroom::workload;
using headroom::workload::test::drain;
using headroom::workload::test::write_file;

namespace {

const char* kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

// The message of the InputError that reading the whole file throws ("" if none).
std::string read_error(const std::string& path, TraceOptions options = {}) {
  try {
    auto reader = open_trace(path, options);
    drain(*reader);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("Azure CSV: a bad token count names file, line and column") {
  const auto f = write_file("azure-bad", "t.csv",
                            std::string(kAzureHeader) + "2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:47.0,37x,44\n");
  CHECK(read_error(f) == f + ":3: column 2 (ContextTokens): expected a non-negative integer, got '37x'");
  const auto neg = write_file("azure-neg", "t.csv", std::string(kAzureHeader) + "2023-11-16 18:15:46.6805900,374,-4\n");
  CHECK(read_error(neg) == neg + ":2: column 3 (GeneratedTokens): expected a non-negative integer, got '-4'");
  const auto empty = write_file("azure-empty", "t.csv", std::string(kAzureHeader) + "2023-11-16 18:15:46.6805900,,4\n");
  CHECK(read_error(empty) == empty + ":2: column 2 (ContextTokens): expected a non-negative integer, got ''");
  const auto big = write_file("azure-big", "t.csv", std::string(kAzureHeader) + "2023-11-16 18:15:46.6805900,5,99999999999\n");
  CHECK(read_error(big) ==
        big + ":2: column 3 (GeneratedTokens): expected a token count of at most 1000000000, got '99999999999'");
}

TEST_CASE("Azure CSV: a bad timestamp is reported with the expected shape") {
  for (const char* bad : {"2023-11-16 25:00:00.0000000", "2023-02-30 10:00:00", "2023-11-16 18:15:46.", "16/11/2023 18:15",
                          "2023-11-16 18:15:46.1234567890"}) {
    const auto f = write_file("azure-time", "t.csv", std::string(kAzureHeader) + bad + ",1,1\n");
    CHECK(read_error(f) == f + ":2: column 1 (TIMESTAMP): expected a time like '2023-11-16 18:15:46.6805900', got '" +
                               bad + "'");
  }
}

TEST_CASE("CSV: a row with the wrong number of columns") {
  const auto f = write_file("azure-cols", "t.csv", std::string(kAzureHeader) + "2023-11-16 18:15:46.6805900,374,44\n\n2023-11-16 18:15:47.0,5\n");
  CHECK(read_error(f) == f + ":4: expected 3 columns (TIMESTAMP,ContextTokens,GeneratedTokens), got 2");
  const auto q = write_file("csv-quote", "t.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n0.5,\"12,3\n");
  CHECK(read_error(q) == q + ":2: column 2: unterminated quoted field or text after its closing quote");
}

TEST_CASE("unsorted timestamps are an error unless sorting is asked for") {
  const auto f = write_file("azure-unsorted", "t.csv",
                            std::string(kAzureHeader) +
                                "2023-11-16 18:15:46.6805900,10,1\n2023-11-16 18:15:50.0000000,20,2\n"
                                "2023-11-16 18:15:40.0000000,30,3\n");
  CHECK(read_error(f) == f + ":4: timestamp 2023-11-16 18:15:40.0000000 is earlier than the previous row's "
                             "2023-11-16 18:15:50.0000000 (the trace must be sorted; pass sort to sort it)");
  TraceOptions sort;
  sort.sort = true;
  auto reader = open_trace(f, sort);
  const auto rs = drain(*reader);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].input_tokens == 30);
  CHECK(rs[0].arrival_s == 0.0);
  CHECK(rs[1].input_tokens == 10);
  CHECK(rs[1].arrival_s == 6.68059);
  CHECK(rs[2].input_tokens == 20);
  CHECK(rs[2].arrival_s == 10.0);
  CHECK(rs[2].id == 2);
  CHECK(reader->stats().loaded_to_sort);

  const auto m = write_file("mooncake-unsorted", "t.jsonl",
                            "{\"timestamp\": 3000, \"input_length\": 1, \"output_length\": 1}\n"
                            "{\"timestamp\": 2999, \"input_length\": 1, \"output_length\": 1}\n");
  CHECK(read_error(m) == m + ":2: timestamp 2999 is earlier than the previous row's 3000 (the trace must be sorted; "
                             "pass sort to sort it)");
}

TEST_CASE("skip_bad_rows counts and reports malformed rows") {
  const auto f = write_file("azure-skip", "t.csv",
                            std::string(kAzureHeader) +
                                "2023-11-16 18:15:46.6805900,10,1\n2023-11-16 18:15:47,x,2\n2023-11-16 18:15:48,30\n"
                                "2023-11-16 18:15:49,40,4\n");
  TraceOptions skip;
  skip.skip_bad_rows = true;
  auto reader = open_trace(f, skip);
  const auto rs = drain(*reader);
  REQUIRE(rs.size() == 2);
  CHECK(rs[1].input_tokens == 40);
  CHECK(rs[1].id == 1);
  CHECK(rs[1].arrival_s == Approx(2.31941).margin(1e-12));
  const SourceStats st = reader->stats();
  CHECK(st.rows == 4);
  CHECK(st.bad_rows == 2);
  REQUIRE(st.bad_row_examples.size() == 2);
  CHECK(st.bad_row_examples[0] == f + ":3: column 2 (ContextTokens): expected a non-negative integer, got 'x'");
  CHECK(st.bad_row_examples[1] == f + ":4: expected 3 columns (TIMESTAMP,ContextTokens,GeneratedTokens), got 2");
  CHECK(describe(st) == "4 rows read, 2 requests; malformed rows skipped: 2 (first: " + f +
                            ":3: column 2 (ContextTokens): expected a non-negative integer, got 'x')");
  // Sortedness is not a malformed row: it is still an error.
  const auto u = write_file("azure-skip-unsorted", "t.csv",
                            std::string(kAzureHeader) + "2023-11-16 18:15:46,10,1\n2023-11-16 18:15:45,10,1\n");
  CHECK(read_error(u, skip) == u + ":3: timestamp 2023-11-16 18:15:45 is earlier than the previous row's "
                                   "2023-11-16 18:15:46 (the trace must be sorted; pass sort to sort it)");
}

TEST_CASE("Vidur CSV: bad arrival times") {
  const char* header = "arrived_at,num_prefill_tokens,num_decode_tokens\n";
  for (const char* bad : {"abc", "-1.5", "nan", "inf", "1.5s", ""}) {
    const auto f = write_file("vidur-bad", "t.csv", std::string(header) + "0.0,1,1\n" + bad + ",2,2\n");
    CHECK(read_error(f) == f + ":3: column 1 (arrived_at): expected a non-negative number of seconds, got '" + bad + "'");
  }
  const auto d = write_file("vidur-dec", "t.csv", std::string(header) + "0.5,1,1\n1.5e1,2,2\n");
  auto reader = open_trace(d);
  const auto rs = drain(*reader);
  REQUIRE(rs.size() == 2);
  CHECK(rs[1].arrival_s == 14.5);
}

TEST_CASE("BurstGPT CSV: hand-made file with failed requests and quoted fields") {
  // The documented header (HPMLL/BurstGPT README); the public data files are not available here.
  const std::string csv =
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
      "5,ChatGPT,472,18,490,Conversation log\n"
      "45,ChatGPT,1087,230,1317,Conversation log\n"
      "45,GPT-4,300,0,300,API log\n"             // a failed request
      "118,\"GPT-4\",417,276,693,\"Conversation log\"\n"
      "120.5,ChatGPT,0,20,20,API log\n";         // no prompt
  const auto f = write_file("burstgpt", "BurstGPT_1.csv", csv);
  auto reader = open_trace(f);
  CHECK(reader->format() == TraceFormat::burstgpt_csv);
  auto rs = drain(*reader);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].arrival_s == 0.0);  // rebased: the collection's first row is at 5 s
  CHECK(rs[1].arrival_s == 40.0);
  CHECK(rs[1].input_tokens == 1087);
  CHECK(rs[1].output_tokens == 230);
  CHECK(rs[2].arrival_s == 113.0);
  CHECK(rs[2].input_tokens == 417);
  CHECK(rs[2].id == 2);
  SourceStats st = reader->stats();
  CHECK(st.rows == 5);
  CHECK(st.zero_output_skipped == 1);
  CHECK(st.zero_input_skipped == 1);
  CHECK(describe(st) == "5 rows read, 3 requests; rows with 0 input tokens skipped: 1; rows with 0 output tokens skipped: 1");

  TraceOptions keep;
  keep.keep_zero_output = true;
  reader = open_trace(f, keep);
  rs = drain(*reader);
  REQUIRE(rs.size() == 4);
  CHECK(rs[2].output_tokens == 0);
  CHECK(rs[2].input_tokens == 300);
  CHECK(reader->stats().zero_output_kept == 1);
  CHECK(reader->stats().zero_input_skipped == 1);

  const auto bad = write_file("burstgpt-bad", "b.csv",
                              "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                              "5,ChatGPT,472,1.5,490,Conversation log\n");
  CHECK(read_error(bad) == bad + ":2: column 4 (Response tokens): expected a non-negative integer, got '1.5'");
}

TEST_CASE("Mooncake JSONL: malformed objects") {
  struct Case {
    const char* line;
    const char* error;
  };
  const Case cases[] = {
      {"{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1]}",
       "hash_ids has 1 entries but input_length 600 needs 2 (one per 512-token block)"},
      {"{\"timestamp\": 0, \"input_length\": -3, \"output_length\": 5}",
       "column 34 (input_length): expected a non-negative integer, got '-3'"},
      {"{\"timestamp\": 0, \"output_length\": 5}", "missing key \"input_length\""},
      {"{\"input_length\": 1, \"output_length\": 5}", "missing key \"timestamp\""},
      {"{\"timestamp\": \"soon\", \"input_length\": 1, \"output_length\": 5}",
       "column 15 (timestamp): expected a non-negative number of milliseconds, got '\"soon\"'"},
      {"{\"timestamp\": 0 \"input_length\": 1}", "column 17: expected ',' or '}', got '\"'"},
      {"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 5", "column 55: expected ',' or '}', got end of line"},
      {"[1, 2]", "column 1: expected '{' (one JSON object per line), got '['"},
      {"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 5, \"hash_ids\": [7 8]}",
       "column 72: expected ',' or ']' in hash_ids, got '8'"},
      {"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 5, \"hash_ids\": [x]}",
       "column 70 (hash_ids): expected a non-negative integer, got 'x'"},
      {"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 5} trailing",
       "column 57: expected the end of the line after the JSON object, got 't'"},
      {"{timestamp: 0}", "column 2: expected a quoted key, got 't'"},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    // The first line must look like JSON for detection; put the bad one second.
    const auto f = write_file("mooncake-bad", "t.jsonl",
                              std::string("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n") + c.line + "\n");
    CHECK(read_error(f) == f + ":2: " + c.error);
  }
}

TEST_CASE("Mooncake JSONL: unknown keys are skipped and hash_ids are optional") {
  const auto f = write_file(
      "mooncake-extra", "t.jsonl",
      "{\"timestamp\": 0, \"input_length\": 1025, \"output_length\": 7, \"hash_ids\": [4, 5, 6]}\r\n"
      "{\"session\": {\"id\": \"a,}b\", \"turns\": [1, [2]]}, \"timestamp\": 1500.5, \"input_length\": 3, "
      "\"output_length\": 2, \"flag\": true}\n"
      "\n"
      "{\"timestamp\": 2000, \"input_length\": 0, \"output_length\": 2, \"hash_ids\": []}\n");
  auto reader = open_trace(f);
  const auto rs = drain(*reader);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].prefix_hashes == std::vector<std::uint64_t>{4, 5, 6});
  CHECK(rs[0].prefix_block_tokens == 512);
  CHECK(rs[1].arrival_s == 1.5005);
  CHECK(rs[1].prefix_hashes.empty());
  CHECK(rs[1].prefix_block_tokens == 0);
  CHECK(reader->stats().zero_input_skipped == 1);
}

TEST_CASE("length-only CSV: a bad value") {
  const auto f = write_file("length-bad", "t.csv",
                            "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n74,918,992,0.08\n290,9o5,1195,0.32\n");
  CHECK(read_error(f) == f + ":3: column 2 (num_decode_tokens): expected a non-negative integer, got '9o5'");
}

TEST_CASE("files that cannot be read as a trace") {
  const auto dir = headroom::test::temp_dir("trace-missing");
  const std::string missing = (dir / "nope.csv").string();
  CHECK(read_error(missing) == missing + ": cannot open (No such file or directory)");
  CHECK(read_error(dir.string()) == dir.string() + ": cannot open (it is a directory)");
  const auto empty = write_file("trace-empty", "e.csv", "");
  CHECK(read_error(empty) == empty + ": the file is empty (expected a CSV header or a JSON object per line)");
  const auto unknown = write_file("trace-unknown", "u.csv", "time,prompt,completion\n1,2,3\n");
  CHECK(read_error(unknown) ==
        unknown + ":1: unrecognised trace format: first line 'time,prompt,completion' (expected a Mooncake JSONL "
                  "object or a CSV header with the columns TIMESTAMP,ContextTokens,GeneratedTokens (Azure), "
                  "arrived_at,num_prefill_tokens,num_decode_tokens (Vidur), Timestamp,Request tokens,Response tokens "
                  "(BurstGPT) or num_prefill_tokens,num_decode_tokens (lengths only))");
  const auto long_line = write_file("trace-long", "l.csv",
                                    "arrived_at,num_prefill_tokens,num_decode_tokens\n" + std::string(1100000, '1') + "\n");
  CHECK(read_error(long_line) == long_line + ":2: line is longer than 1048576 bytes");
}

TEST_CASE("format detection reads the header by column name") {
  CHECK(detect_format("TIMESTAMP,ContextTokens,GeneratedTokens", "f") == TraceFormat::azure_csv);
  CHECK(detect_format("GeneratedTokens, ContextTokens ,TIMESTAMP,extra", "f") == TraceFormat::azure_csv);
  CHECK(detect_format("arrived_at,num_prefill_tokens,num_decode_tokens", "f") == TraceFormat::vidur_csv);
  CHECK(detect_format("num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio", "f") == TraceFormat::length_csv);
  CHECK(detect_format("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type", "f") ==
        TraceFormat::burstgpt_csv);
  CHECK(detect_format("Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type",
                      "f") == TraceFormat::burstgpt_csv);
  CHECK(detect_format("  {\"timestamp\": 0}", "f") == TraceFormat::mooncake_jsonl);
  // A byte-order mark and CRLF line ends are accepted.
  const auto f = write_file("trace-bom", "b.csv", "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,374,44\r\n");
  auto reader = open_trace(f);
  CHECK(reader->format() == TraceFormat::azure_csv);
  const auto rs = drain(*reader);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].output_tokens == 44);
}
