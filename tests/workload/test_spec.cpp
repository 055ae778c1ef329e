// WorkloadSpec and make_source: building each kind of workload, and inconsistent specs.
#include <catch2/catch.hpp>

#include "sim/core/error.hpp"
#include "sim/workload/make_source.hpp"
#include "sim/workload/summary.hpp"
#include "tests/support/test_data.hpp"
#include "tests/workload/test_files.hpp"

using namespace headroom;
using namespace headroom::workload;
using headroom::workload::test::drain;

namespace {

WorkloadSpec synthetic_spec() {
  WorkloadSpec w;
  SyntheticSpec s;
  s.arrivals = {ArrivalKind::poisson, 4.0};
  LengthSpec in;
  in.dist = LengthKind::lognormal;
  in.mean = 1000;
  in.cv = 1.0;
  LengthSpec out;
  out.dist = LengthKind::zipf;
  out.min = 1;
  out.max = 2048;
  out.exponent = 1.1;
  s.input = in;
  s.output = out;
  s.requests = 2'000;
  w.synthetic = s;
  w.seed = 11;
  return w;
}

std::string spec_error(const WorkloadSpec& spec) {
  try {
    auto s = make_source(spec);
    drain(*s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a trace spec with every transformation") {
  WorkloadSpec w;
  w.trace = TraceSpec{headroom::test::data_file("azure2023_code.csv").string(), {}};
  w.transforms.window = WindowSpec{300.0, 2400.0};
  w.transforms.rate_scale = 0.5;
  w.transforms.time_scale = 2.0;
  w.transforms.clip = ClipSpec{4096, ClipMode::drop};
  w.transforms.max_requests = 1'000;
  w.seed = 3;
  auto source = make_source(w);
  const auto rs = drain(*source);
  REQUIRE(rs.size() == 1'000);
  bool ok = true;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    ok &= rs[i].id == i && rs[i].input_tokens < 4096 && rs[i].input_tokens + rs[i].output_tokens <= 4096;
    ok &= rs[i].arrival_s >= 0 && rs[i].arrival_s < 2 * 2100.0;  // window length 2,100 s, stretched twice
  }
  CHECK(ok);
  const SourceStats st = source->stats();
  CHECK(st.emitted == 1'000);
  CHECK(st.outside_window > 0);
  CHECK(st.thinned > 0);
  CHECK(st.dropped_too_long > 0);
  // The same spec gives the same requests.
  auto again = make_source(w);
  const auto rs2 = drain(*again);
  bool same = rs2.size() == rs.size();
  for (std::size_t i = 0; same && i < rs.size(); ++i)
    same = rs[i].arrival_s == rs2[i].arrival_s && rs[i].input_tokens == rs2[i].input_tokens;
  CHECK(same);
}

TEST_CASE("a synthetic spec is deterministic for its seed") {
  auto a = make_source(synthetic_spec());
  auto b = make_source(synthetic_spec());
  const auto ra = drain(*a), rb = drain(*b);
  REQUIRE(ra.size() == 2'000);
  bool same = ra.size() == rb.size();
  for (std::size_t i = 0; same && i < ra.size(); ++i)
    same = ra[i].arrival_s == rb[i].arrival_s && ra[i].input_tokens == rb[i].input_tokens &&
           ra[i].output_tokens == rb[i].output_tokens;
  CHECK(same);
  WorkloadSpec other = synthetic_spec();
  other.seed = 12;
  auto c = make_source(other);
  CHECK(drain(*c)[1].arrival_s != ra[1].arrival_s);
}

TEST_CASE("a synthetic spec with lengths from a file") {
  WorkloadSpec w;
  SyntheticSpec s;
  s.arrivals = {ArrivalKind::gamma, 3.0, 4.0};
  s.lengths_file = LengthFileSpec{headroom::test::data_file("etalon_bwb_stats_llama2_tokenizer_filtered_v2.csv").string(),
                                  LengthOrder::sequential, {}};
  w.synthetic = s;
  auto source = make_source(w);
  const Summary sum = summarize(*source);
  CHECK(sum.count == 33'768);
  CHECK(sum.output.mean == Approx(1612.83).margin(0.01));
  CHECK(sum.interarrival_cv == Approx(4.0).epsilon(0.05));
}

TEST_CASE("inconsistent workload specs are input errors") {
  CHECK(spec_error(WorkloadSpec{}) == "workload: give a trace or a synthetic workload");
  WorkloadSpec both = synthetic_spec();
  both.trace = TraceSpec{"x.csv", {}};
  CHECK(spec_error(both) == "workload: give either trace or synthetic, not both");

  WorkloadSpec lengths_as_trace;
  const auto lf = headroom::test::data_file("sharegpt_8k_filtered_stats_llama2_tokenizer.csv").string();
  lengths_as_trace.trace = TraceSpec{lf, {}};
  CHECK(spec_error(lengths_as_trace) == lf + ": a length-only file has no arrival times; use it as "
                                             "synthetic.lengths_file with an arrival process");

  WorkloadSpec no_output = synthetic_spec();
  no_output.synthetic->output.reset();
  CHECK(spec_error(no_output) == "synthetic: give both input and output length distributions, or lengths_file");
  WorkloadSpec both_lengths = synthetic_spec();
  both_lengths.synthetic->lengths_file = LengthFileSpec{lf, LengthOrder::sample, {}};
  CHECK(spec_error(both_lengths) == "synthetic: give input and output distributions or lengths_file, not both");
  WorkloadSpec no_max = synthetic_spec();
  no_max.synthetic->output->max.reset();
  CHECK(spec_error(no_max) == "synthetic.output: this distribution needs max");
  WorkloadSpec bad_rate = synthetic_spec();
  bad_rate.synthetic->arrivals.rate = -1;
  CHECK(spec_error(bad_rate) == "poisson arrivals: rate must be a positive number of requests per second, got -1");
  WorkloadSpec bad_scale = synthetic_spec();
  bad_scale.transforms.time_scale = 0;
  CHECK(spec_error(bad_scale) == "time_scale: must be a positive number, got 0");
}
