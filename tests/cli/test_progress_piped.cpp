// compare and tune draw a progress line only on a terminal (sim/core/progress.hpp; its drawing is
// tests/core/test_progress.cpp): piped, as here and in every script or CI log, they print their
// results and nothing else.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/test_data.hpp"

using headroom::test::q;
using headroom::test::run_headroom;
using headroom::test::write;

TEST_CASE("compare and tune print no progress line when their output is piped") {
  const auto dir = headroom::test::temp_dir("progress-piped");
  write(dir / "small.yaml",
        "name: small\ngpu: {profile: h100-sxm-80gb}\nmodel: {name: Llama-3.1-8B}\nengine: {kind: vllm}\n"
        "workload: {synthetic: {requests: 20, arrivals: {process: poisson, rate: 10}, "
        "input: {dist: fixed, value: 200}, output: {dist: fixed, value: 20}}}\n");
  const auto compare = run_headroom("compare " + q(dir / "small.yaml") + " -o " + q(dir / "compare"));
  INFO(compare.output);
  REQUIRE(compare.exit_code == 0);
  CHECK(compare.output.rfind("small: ", 0) == 0);  // the table's title comes first
  CHECK(compare.output.find('\r') == std::string::npos);
  CHECK(compare.output.find(" points, ") == std::string::npos);

  const auto tune = run_headroom("tune " + q(dir / "small.yaml") + " --knob gpu_memory_utilization --range 0.9:0.95 "
                                 "--points 2 --stress none -o " + q(dir / "tune"));
  INFO(tune.output);
  REQUIRE(tune.exit_code == 0);
  CHECK(tune.output.find('\r') == std::string::npos);
  CHECK(tune.output.find(" points, ") == std::string::npos);
}
