// `headroom tune` of the requests a step runs (issue 16): SGLang's max_running_requests alone, its
// sampler cliff bisected to one request and re-checked with `run`; and jointly with the memory
// fraction (--with), the pair chosen by KV tokens among the safe, keeping-up pairs that meet the SLO.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/support/json_file.hpp"
#include "tests/support/test_data.hpp"

using headroom::test::q;
using headroom::test::read_json;
using headroom::test::run_headroom;
using headroom::test::slurp;
using headroom::test::write;
namespace fs = std::filesystem;

namespace {

// A burst of ~1,200 requests in 3 s, then 30 s quiet, then the next burst's first ~100: Qwen2.5-7B's
// 152,064-token vocabulary makes the sampler's fp32 logits 594 MiB at 1,024 rows
// (scenarios/incident-sampler-spike.yaml), which SGLang's arithmetic sizing never measures.
fs::path spike_scenario(const fs::path& dir, const std::string& engine_extra, const std::string& extra) {
  const fs::path file = dir / "spike.yaml";
  write(file, "name: spike\nseed: 5\ngpu: {profile: h100-sxm-80gb}\nmodel: {name: Qwen2.5-7B}\n"
              "engine: {kind: sglang" + engine_extra + "}\n"
              "workload: {synthetic: {requests: 1300, arrivals: {process: on_off, rate: 400, on_s: 3, off_s: 30}, "
              "input: {dist: lognormal, mean: 300, cv: 0.5, max: 4096}, "
              "output: {dist: lognormal, mean: 400, cv: 0.5, max: 2048}}}\n" + extra);
  return file;
}

}  // namespace

TEST_CASE("tune max_running_requests: the sampler cliff to one request, run at it serves and one more dies") {
  const fs::path dir = headroom::test::temp_dir("tune-requests");
  const fs::path sc = spike_scenario(dir, ", mem_fraction_static: 0.965", "");  // as the incident scenario
  auto r = run_headroom("tune " + q(sc) + " --knob max_running_requests --range 256:1024 --points 4 --stress none "
                        "--resolution 1 -j 1 -o " + q(dir / "t"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json t = read_json(dir / "t" / "tune.json");
  CHECK(t["best"] == 512);           // grid 256, 512, 768, 1024: 768 runs out of memory
  CHECK(t["first_failing"] == 768);
  const nlohmann::json& cliff = t["answer"]["cliffs"][0];
  const int safe = cliff["safe"].get<int>();
  CHECK(cliff["failing"] == safe + 1);  // whole numbers, to the resolution 1
  CHECK(safe > 512);
  CHECK(safe < 768);
  CHECK(t["answer"]["margin"] == 0);   // one variant: no spread, and no minimum for a whole-number knob
  CHECK(t["answer"]["value"] == safe);
  CHECK(t["answer"]["flag"] == fmt::format("--max-running-requests {}", safe));
  CHECK_THAT(r.output, Catch::Contains(fmt::format("  use          --max-running-requests {} ", safe)));

  // `run` at the answer serves every request; one request more runs out of memory in the sampler.
  auto run_at = [&](int n) {
    const fs::path file = spike_scenario(dir, fmt::format(", mem_fraction_static: 0.965, max_running_requests: {}", n), "");
    const fs::path at = dir / fmt::format("at-{}.yaml", n);
    fs::rename(file, at);
    auto rr = run_headroom("run " + q(at) + " --no-progress --json -o " + q(dir / fmt::format("run-{}", n)));
    INFO(rr.output);
    REQUIRE(rr.exit_code == 0);
    return read_json(dir / fmt::format("run-{}", n) / "summary.json");
  };
  CHECK(run_at(safe)["oom"].is_null());
  const nlohmann::json over = run_at(safe + 1);
  REQUIRE_FALSE(over["oom"].is_null());
}

TEST_CASE("tune jointly: the fraction's answer at each max_running_requests, the pair with the most KV that keeps up") {
  const fs::path dir = headroom::test::temp_dir("tune-joint");
  const fs::path sc = spike_scenario(dir, "", "");
  auto r = run_headroom("tune " + q(sc) + " --knob mem_fraction_static --range 0.85:0.97 --points 3 --stress none "
                        "--with max_running_requests=1024,128,512 -o " + q(dir / "t"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json t = read_json(dir / "t" / "tune.json");
  REQUIRE(t["joint"].size() == 3);
  // 128 requests at once cannot drain the burst before the next one: overloaded.
  CHECK(t["joint"][0]["with_value"] == 128);
  CHECK(t["joint"][0]["answer"]["value"] == 0.96);
  CHECK(t["joint"][0]["answer"]["overloaded"] == true);
  // 512 keeps up; its cliff is below 0.97 (the graphs' fp32 logits buffer, SGLang's
  // cuda_graph_runner.py, is held outside the pool): bisected to 0.96625, 0.955 with the 0.01 margin.
  CHECK(t["joint"][1]["first_failing"] == 0.97);
  CHECK(t["joint"][1]["answer"]["safe"] == 0.96625);
  CHECK(t["joint"][1]["answer"]["value"] == 0.955);
  CHECK(t["joint"][1]["answer"]["overloaded"] == false);
  // 1,024 rows of fp32 logits (594 MiB) run out of memory sooner: the cliff bisected to 0.95125.
  CHECK(t["joint"][2]["first_failing"] == 0.97);
  CHECK(t["joint"][2]["answer"]["safe"] == 0.95125);
  CHECK(t["joint"][2]["answer"]["value"] == 0.94);
  CHECK(t["joint"][2]["answer"]["kv_tokens"].get<long>() < t["joint"][1]["answer"]["kv_tokens"].get<long>());
  // The answer: 512 at 0.955 (128 has more KV tokens but is overloaded).
  CHECK(t["joint"][0]["answer"]["kv_tokens"].get<long>() > t["joint"][1]["answer"]["kv_tokens"].get<long>());
  CHECK(t["answer"]["with_value"] == 512);
  CHECK(t["answer"]["value"] == 0.955);
  CHECK(t["answer"]["flags"] == nlohmann::json{"--max-running-requests 512", "--mem-fraction-static 0.955"});
  CHECK_THAT(r.output, Catch::Contains("  use          --max-running-requests 512 --mem-fraction-static 0.955 ("));
  CHECK(t["with"]["knob"] == "max_running_requests");
  CHECK(t["frontier"].size() == 3);  // the chosen pair's slice, as a one-knob tune.json has it
  // frontier.csv: a column per knob, a row per pair.
  std::istringstream csv(slurp(dir / "t" / "frontier.csv"));
  std::string line;
  std::getline(csv, line);
  CHECK_THAT(line, Catch::StartsWith("max_running_requests,value,started,kv_tokens,oom,"));
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 9);
  CHECK(fs::exists(dir / "t" / "report.html"));
}

TEST_CASE("tune jointly under an SLO: only the largest batch meets the TTFT p99, and none meets a tight one") {
  const fs::path dir = headroom::test::temp_dir("tune-joint-slo");
  const std::string args = " --knob mem_fraction_static --range 0.85:0.97 --points 3 --stress none "
                           "--with max_running_requests=512,1024 --fail-on slo -o ";
  // TTFT p99 at 512 requests at once is 18.3 s, at 1,024 11.0 s.
  auto r = run_headroom("tune " + q(spike_scenario(dir, "", "slo: {ttft_p99_s: 15}\n")) + args + q(dir / "a"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  nlohmann::json t = read_json(dir / "a" / "tune.json");
  CHECK(t["joint"][0]["answer"]["slo_met"] == false);
  CHECK(t["joint"][0]["answer"]["value"].is_null());
  CHECK(t["joint"][1]["answer"]["slo_met"] == true);
  CHECK(t["answer"]["flags"] == nlohmann::json{"--max-running-requests 1024", "--mem-fraction-static 0.94"});

  // TTFT p99 1 s: not even 1,024 at once meets it (one slice is enough to show it).
  r = run_headroom("tune " + q(spike_scenario(dir, "", "slo: {ttft_p99_s: 1}\n")) +
                   " --knob mem_fraction_static --range 0.85:0.97 --points 2 --stress none "
                   "--with max_running_requests=1024 --fail-on slo -o " + q(dir / "b"));
  INFO(r.output);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.output, Catch::Contains("  use          none: no pair is safe on every variant, not overloaded and meeting the SLO"));
  t = read_json(dir / "b" / "tune.json");
  CHECK(t["answer"]["value"].is_null());
  CHECK(t["answer"]["flags"].empty());
}
