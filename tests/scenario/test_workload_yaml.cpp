// The workload section of a scenario: every shape of make_source.hpp, and bad values with the
// exact message (file, line, column, key).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/scenario/workload_yaml.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::scenario;

namespace {
const std::string kFile = "s.yaml";
workload::WorkloadSpec parse(const std::string& text) {
  YAML::Node root = YAML::Load(text);
  YamlSection top(root, kFile, "");
  return read_workload(top.child("workload"), "/scenarios");
}
std::string error(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("workload yaml: a trace with options and every transformation") {
  auto w = parse(
      "workload:\n"
      "  seed: 7\n"
      "  trace: {path: traces/azure.csv, sort: true, skip_bad_rows: true}\n"
      "  transforms:\n"
      "    window: {start_s: 60, end_s: 120}\n"
      "    rate_scale: 1.25\n"
      "    time_scale: 0.5\n"
      "    clip: {context: 8192, mode: drop}\n"
      "    max_requests: 100\n");
  CHECK(w.seed == 7);
  REQUIRE(w.trace);
  CHECK(w.trace->path == "/scenarios/traces/azure.csv");  // relative to the scenario's folder
  CHECK(w.trace->options.sort);
  CHECK(w.trace->options.skip_bad_rows);
  CHECK_FALSE(w.trace->options.keep_zero_output);
  REQUIRE(w.transforms.window);
  CHECK(w.transforms.window->start_s == 60);
  CHECK(w.transforms.window->end_s == 120);
  CHECK(w.transforms.rate_scale == 1.25);
  CHECK(w.transforms.time_scale == 0.5);
  REQUIRE(w.transforms.clip);
  CHECK(w.transforms.clip->context == 8192);
  CHECK(w.transforms.clip->mode == workload::ClipMode::drop);
  CHECK(w.transforms.max_requests == 100u);
}

TEST_CASE("workload yaml: synthetic arrivals and lengths") {
  auto w = parse(
      "workload:\n"
      "  synthetic:\n"
      "    requests: 500\n"
      "    arrivals: {process: gamma, rate: 5, cv: 3}\n"
      "    input: {dist: lognormal, mean: 1200, cv: 1.0, max: 32768}\n"
      "    output: {dist: zipf, max: 2048, exponent: 1.2}\n");
  REQUIRE(w.synthetic);
  CHECK(w.synthetic->requests == 500u);
  CHECK(w.synthetic->arrivals.process == workload::ArrivalKind::gamma);
  CHECK(w.synthetic->arrivals.rate == 5);
  CHECK(w.synthetic->arrivals.cv == 3);
  REQUIRE(w.synthetic->input);
  CHECK(w.synthetic->input->dist == workload::LengthKind::lognormal);
  CHECK(w.synthetic->input->mean == 1200);
  CHECK(w.synthetic->input->max == 32768);
  CHECK(w.synthetic->output->dist == workload::LengthKind::zipf);
  CHECK(w.synthetic->output->exponent == 1.2);
  // $HEADROOM_DATA names the data folder; the file must be there when the scenario is read.
  const std::filesystem::path data = test::temp_dir("workload-data");
  test::write(data / "sharegpt.csv", "input_length,output_length\n10,20\n");
  ::setenv("HEADROOM_DATA", data.c_str(), 1);
  const std::string lengths =
      "workload:\n"
      "  synthetic:\n"
      "    duration_s: 60\n"
      "    arrivals: {process: on_off, rate: 50, on_s: 2, off_s: 8}\n"
      "    lengths_file: {path: $HEADROOM_DATA/sharegpt.csv, order: sample}\n";
  auto b = parse(lengths);
  CHECK(b.synthetic->duration_s == 60);
  CHECK(b.synthetic->arrivals.on_s == 2);
  REQUIRE(b.synthetic->lengths_file);
  CHECK(b.synthetic->lengths_file->order == workload::LengthOrder::sample);
  CHECK(b.synthetic->lengths_file->path == data.string() + "/sharegpt.csv");

  // A missing data file names the variable, its value and the README section on the public traces.
  std::filesystem::remove(data / "sharegpt.csv");
  CHECK(error(lengths) == "s.yaml:5:26: key 'workload.synthetic.lengths_file.path': " + data.string() +
                              "/sharegpt.csv: no such file (HEADROOM_DATA is '" + data.string() +
                              "'). The public traces are not part of headroom: the README, section \"Public traces "
                              "and HEADROOM_DATA\", says where to get them and how to point HEADROOM_DATA at them");
  ::unsetenv("HEADROOM_DATA");
  CHECK_THAT(error(lengths), Catch::Contains("HEADROOM_DATA is not set, so it is '../shared/traces' from the folder "
                                             "headroom runs in, " + std::filesystem::current_path().string()));
}

TEST_CASE("workload yaml: bad values name the file, line, column and key") {
  CHECK(error("workload:\n  trace: {path: a.csv}\n  synthetic: {requests: 1}\n") ==
        "s.yaml:2:3: key 'workload.trace': give exactly one of 'trace' or 'synthetic'");
  CHECK(error("workload:\n  trace: {path: a.csv, srot: true}\n") ==
        "s.yaml:2:24: unknown key 'workload.trace.srot'; did you mean 'sort'?");
  CHECK(error("workload:\n  synthetic:\n    requests: -3\n    arrivals: {process: poisson, rate: 1}\n"
              "    input: {dist: fixed, value: 10}\n    output: {dist: fixed, value: 10}\n") ==
        "s.yaml:3:15: key 'workload.synthetic.requests': expected a whole number from 1 to 9223372036854775807, got '-3'");
  CHECK(error("workload:\n  synthetic:\n    arrivals: {process: posson, rate: 1}\n") ==
        "s.yaml:3:25: key 'workload.synthetic.arrivals.process': expected poisson or gamma or on_off, got 'posson'; "
        "did you mean 'poisson'?");
  CHECK(error("workload:\n  synthetic:\n    arrivals: {process: poisson, rate: .nan}\n") ==
        "s.yaml:3:40: key 'workload.synthetic.arrivals.rate': expected a positive number, got '.nan'");
  CHECK(error("workload:\n  synthetic:\n    arrivals: {process: poisson, rate: 2}\n"
              "    input: {dist: fixed, value: 10}\n") ==
        "s.yaml:3:5: missing key 'workload.synthetic.output'");
  CHECK(error("workload:\n  trace: {path: a.csv}\n  transforms: {clip: {context: 1}}\n") ==
        "s.yaml:3:32: key 'workload.transforms.clip.context': expected a whole number from 2 to 1000000000, got '1'");
}
