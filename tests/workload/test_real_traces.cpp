// Every reader on the real public files in $HEADROOM_DATA, against the figures of
// docs/workloads.md (rounded there; compared to half a unit of the last digit shown).
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <unordered_set>

#include "sim/workload/open_trace.hpp"
#include "sim/workload/summary.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom::workload;
using headroom::test::data_file;

namespace {

struct Expected {
  double mean, p50, p99, max;
};

void check_lengths(const LengthSummary& s, Expected e, double mean_margin = 0.5) {
  CHECK(s.mean == Approx(e.mean).margin(mean_margin));
  CHECK(s.p50 == Approx(e.p50).margin(0.5));
  CHECK(s.p99 == Approx(e.p99).margin(0.5));
  CHECK(static_cast<double>(s.max) == e.max);
}

Summary summarize_file(const std::string& name, TraceFormat format) {
  auto reader = open_trace(data_file(name));
  CHECK(reader->format() == format);
  const Summary s = summarize(*reader);
  const SourceStats st = reader->stats();
  CHECK(st.rows == s.count);  // nothing skipped in these files
  CHECK(st.emitted == s.count);
  CHECK(st.bad_rows == 0);
  CHECK(st.zero_input_skipped == 0);
  CHECK(st.zero_output_skipped == 0);
  return s;
}

// Ideal prefix-cache reuse as the README defines it: infinite cache, arrival order, a request
// hits the longest run of leading blocks already seen.
struct PrefixReuse {
  std::uint64_t refs = 0, unique = 0, hits = 0;
};
PrefixReuse prefix_reuse(RequestSource& source) {
  PrefixReuse p;
  std::unordered_set<std::uint64_t> seen;
  Request r;
  while (source.next(r)) {
    REQUIRE(r.prefix_block_tokens == kMooncakeBlockTokens);
    REQUIRE(r.prefix_hashes.size() == static_cast<std::size_t>((r.input_tokens + 511) / 512));
    p.refs += r.prefix_hashes.size();
    std::size_t k = 0;
    while (k < r.prefix_hashes.size() && seen.count(r.prefix_hashes[k])) ++k;
    p.hits += k;
    seen.insert(r.prefix_hashes.begin(), r.prefix_hashes.end());
  }
  p.unique = seen.size();
  return p;
}

}  // namespace

TEST_CASE("azure2023_conv matches the README statistics") {
  const Summary s = summarize_file("azure2023_conv.csv", TraceFormat::azure_csv);
  CHECK(s.count == 19'366);
  CHECK(s.first_arrival_s == 0.0);
  CHECK(s.span_s == Approx(3501.721937).margin(1e-9));  // 18:15:46.6805900 to 19:14:08.4025270
  CHECK(s.rate_per_s == Approx(5.53).margin(0.005));
  CHECK(s.interarrival_cv == Approx(1.09).margin(0.005));
  check_lengths(s.input, {1155, 1020, 4142, 14050});
  check_lengths(s.output, {211, 129, 601, 1000});
  CHECK(s.input.p90 == 2734.5);
  CHECK(s.output.p90 == 424);
}

TEST_CASE("azure2023_code matches the README statistics") {
  const Summary s = summarize_file("azure2023_code.csv", TraceFormat::azure_csv);
  CHECK(s.count == 8'819);
  CHECK(s.span_s == Approx(3435.948056).margin(1e-9));
  CHECK(s.rate_per_s == Approx(2.57).margin(0.005));
  CHECK(s.interarrival_cv == Approx(13.15).margin(0.005));
  check_lengths(s.input, {2048, 1469, 7436, 7437});
  check_lengths(s.output, {27.9, 13, 251, 1899}, 0.05);
}

TEST_CASE("Azure timestamps are parsed exactly to seconds since the first row") {
  auto reader = open_trace(data_file("azure2023_conv.csv"));
  Request r;
  REQUIRE(reader->next(r));
  CHECK(r.id == 0);
  CHECK(r.arrival_s == 0.0);
  CHECK(r.input_tokens == 374);
  CHECK(r.output_tokens == 44);
  REQUIRE(reader->next(r));
  // 18:15:50.9951690 - 18:15:46.6805900 = 4.3145790 s, one rounding from integer nanoseconds.
  CHECK(r.arrival_s == 4.314579);
  CHECK(r.id == 1);
  CHECK(r.prefix_hashes.empty());
}

TEST_CASE("vidur_splitwise files are the Azure rows rebased") {
  for (const char* kind : {"conv", "code"}) {
    INFO(kind);
    auto azure = open_trace(data_file(std::string("azure2023_") + kind + ".csv"));
    auto vidur = open_trace(data_file(std::string("vidur_splitwise_") + kind + ".csv"));
    CHECK(vidur->format() == TraceFormat::vidur_csv);
    Request a, v;
    std::uint64_t n = 0;
    double worst = 0;
    bool lengths_equal = true;
    while (azure->next(a)) {
      REQUIRE(vidur->next(v));
      worst = std::max(worst, std::fabs(a.arrival_s - v.arrival_s));
      lengths_equal &= a.input_tokens == v.input_tokens && a.output_tokens == v.output_tokens;
      ++n;
    }
    CHECK_FALSE(vidur->next(v));
    CHECK(lengths_equal);
    CHECK(worst <= 1e-6);  // Vidur wrote microseconds; Azure has 100 ns
    CHECK(n == (std::string(kind) == "conv" ? 19'366u : 8'819u));
  }
  const Summary s = summarize_file("vidur_splitwise_conv.csv", TraceFormat::vidur_csv);
  CHECK(s.span_s == Approx(3501.721937).margin(1e-9));
  check_lengths(s.input, {1155, 1020, 4142, 14050});
  check_lengths(s.output, {211, 129, 601, 1000});
}

TEST_CASE("mooncake_conversation matches the README statistics and prefix reuse") {
  const Summary s = summarize_file("mooncake_conversation_trace.jsonl", TraceFormat::mooncake_jsonl);
  CHECK(s.count == 12'031);
  CHECK(s.span_s == Approx(3537.0).margin(0.0005));  // timestamps in ms: 3,536,999
  CHECK(s.rate_per_s == Approx(3.40).margin(0.005));
  CHECK(s.interarrival_cv == Approx(3.03).margin(0.005));
  check_lengths(s.input, {12035, 6909, 85400, 126195});
  check_lengths(s.output, {343, 350, 1119, 2000});
  auto reader = open_trace(data_file("mooncake_conversation_trace.jsonl"));
  const PrefixReuse p = prefix_reuse(*reader);
  CHECK(p.refs == 288'500);
  CHECK(p.unique == 182'790);
  CHECK(static_cast<double>(p.hits) / static_cast<double>(p.refs) == Approx(0.366).margin(0.0005));
}

TEST_CASE("mooncake_synthetic matches the README statistics and prefix reuse") {
  const Summary s = summarize_file("mooncake_synthetic_trace.jsonl", TraceFormat::mooncake_jsonl);
  CHECK(s.count == 3'993);
  CHECK(s.span_s == Approx(1022.025).margin(1e-9));
  CHECK(s.rate_per_s == Approx(3.91).margin(0.005));
  CHECK(s.interarrival_cv == Approx(1.01).margin(0.005));
  // The README prints the input mean as 15,326; the exact mean is 15,325.48.
  CHECK(s.input.mean == Approx(15325.4766).margin(0.0001));
  check_lengths(s.input, {15325.5, 11587, 66456, 191378});
  check_lengths(s.output, {149, 69, 768, 893});
  auto reader = open_trace(data_file("mooncake_synthetic_trace.jsonl"));
  const PrefixReuse p = prefix_reuse(*reader);
  CHECK(p.refs == 121'877);
  CHECK(p.unique == 43'924);
  CHECK(static_cast<double>(p.hits) / static_cast<double>(p.refs) == Approx(0.640).margin(0.0005));
}

TEST_CASE("the length-only files match the README statistics") {
  struct Case {
    const char* file;
    std::uint64_t rows;
    Expected in, out;
  };
  const Case cases[] = {
      {"sharegpt_8k_filtered_stats_llama2_tokenizer.csv", 30'731, {2340, 1730, 7434, 8141}, {439, 415, 998, 1024}},
      {"vidur_arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", 28'257, {2588, 2730, 3933, 4054},
       {291, 167, 3271, 4056}},
      {"etalon_bwb_stats_llama2_tokenizer_filtered_v2.csv", 33'768, {1067, 1037, 1800, 3504}, {1613, 1601, 2533, 2858}},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    auto reader = open_trace(data_file(c.file));
    CHECK(reader->format() == TraceFormat::length_csv);
    CHECK_FALSE(reader->has_arrival_times());
    const Summary s = summarize(*reader);
    CHECK(s.count == c.rows);
    CHECK(s.span_s == 0.0);
    CHECK(s.rate_per_s == 0.0);
    check_lengths(s.input, c.in);
    check_lengths(s.output, c.out);
  }
}

TEST_CASE("sorting a sorted real trace changes nothing") {
  TraceOptions sort;
  sort.sort = true;
  auto plain = open_trace(data_file("mooncake_synthetic_trace.jsonl"));
  auto sorted = open_trace(data_file("mooncake_synthetic_trace.jsonl"), sort);
  Request a, b;
  bool same = true;
  std::uint64_t n = 0;
  while (plain->next(a)) {
    REQUIRE(sorted->next(b));
    same &= a.id == b.id && a.arrival_s == b.arrival_s && a.input_tokens == b.input_tokens &&
            a.output_tokens == b.output_tokens && a.prefix_hashes == b.prefix_hashes;
    ++n;
  }
  CHECK_FALSE(sorted->next(b));
  CHECK(same);
  CHECK(n == 3'993);
  CHECK(sorted->stats().loaded_to_sort);
  CHECK_FALSE(plain->stats().loaded_to_sort);
}
