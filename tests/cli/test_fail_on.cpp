// --fail-on oom,slo,overload (issue 16): `run`, `compare` and `tune` exit 3 when a named condition
// holds, after writing every output; 0 when none does; 2 for a bad list. The scenarios: vLLM with
// one running request at a time, 40 requests of 100 + 20 tokens (~0.118 s each) arriving at 400/s
// (overloaded: 39 of 40 wait at the last arrival) or 2/s (keeps up).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

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

fs::path scenario_file(const fs::path& dir, const std::string& name, double rate, const std::string& extra) {
  const fs::path file = dir / (name + ".yaml");
  write(file, "name: " + name +
                  "\ngpu: {profile: h100-sxm-80gb}\nmodel: {name: Llama-3.1-8B}\nengine: {kind: vllm, max_num_seqs: 1}\n"
                  "workload: {synthetic: {requests: 40, arrivals: {process: poisson, rate: " + std::to_string(rate) +
                  "}, input: {dist: fixed, value: 100}, output: {dist: fixed, value: 20}}}\n" + extra);
  return file;
}

}  // namespace

TEST_CASE("run --fail-on: an overloaded run exits 3 with its outputs written, 0 when the condition is not asked for") {
  const fs::path dir = headroom::test::temp_dir("fail-on-run");
  const fs::path busy = scenario_file(dir, "busy", 400, "");
  auto r = run_headroom("run " + q(busy) + " --no-progress --fail-on overload -o " + q(dir / "a"));
  INFO(r.output);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.output, Catch::Contains("headroom: --fail-on: overload (39 of 40 requests (98 %) still waiting at the "
                                       "last arrival"));
  CHECK_THAT(r.output, Catch::Contains("with Llama-3.1-8B is overloaded: 39 of 40 requests (98 %)"));
  const nlohmann::json v = read_json(dir / "a" / "summary.json")["verdict"];
  CHECK(v["oom"] == false);
  CHECK(v["overloaded"] == true);
  CHECK(v["slo_met"].is_null());
  for (const char* f : {"timeline.csv", "requests.csv", "scenario.resolved.yaml", "report.html"}) CHECK(fs::exists(dir / "a" / f));
  CHECK(run_headroom("run " + q(busy) + " --no-progress --fail-on oom -o " + q(dir / "b")).exit_code == 0);
}

TEST_CASE("run --fail-on slo: a loose SLO is met (exit 0), a tight one missed (exit 3), the SLO resolved with the scenario") {
  const fs::path dir = headroom::test::temp_dir("fail-on-slo");
  const fs::path loose = scenario_file(dir, "loose", 2, "slo: {ttft_p99_s: 10, e2e_p99_s: 10}\n");
  auto r = run_headroom("run " + q(loose) + " --no-progress --fail-on oom,slo,overload -o " + q(dir / "loose"));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("serves all 40 requests without running out of memory, within the SLO (TTFT p99 "));
  const nlohmann::json s = read_json(dir / "loose" / "summary.json");
  CHECK(s["slo"] == nlohmann::json{{"ttft_p99_s", 10}, {"e2e_p99_s", 10}});
  CHECK(s["verdict"]["slo_met"] == true);
  CHECK(s["verdict"]["overloaded"] == false);
  CHECK(s["metrics"]["queue_s"]["count"] == 40);
  // The resolved scenario keeps the SLO and runs to the same verdict.
  auto again = run_headroom("run " + q(dir / "loose" / "scenario.resolved.yaml") + " --no-progress -o " + q(dir / "again"));
  REQUIRE(again.exit_code == 0);
  CHECK(read_json(dir / "again" / "summary.json")["verdict"] == s["verdict"]);

  // Every request takes at least its ~0.118 s of steps: an e2e p99 of 0.01 s cannot be met.
  const fs::path tight = scenario_file(dir, "tight", 2, "slo: {ttft_p99_s: 10, e2e_p99_s: 0.01}\n");
  auto t = run_headroom("run " + q(tight) + " --no-progress --json --fail-on slo -o " + q(dir / "tight"));
  CHECK(t.exit_code == 3);
  CHECK_THAT(t.output, Catch::Contains("headroom: --fail-on: slo (e2e p99 0.2"));
  CHECK_THAT(t.output, Catch::Contains(" s > 0.010 s)"));
  const nlohmann::json v = read_json(dir / "tight" / "summary.json")["verdict"];
  CHECK(v["slo_met"] == false);
  CHECK(v["slo"][0]["met"] == true);
  CHECK(v["slo"][1]["objective"] == "e2e_p99_s");
  CHECK(v["slo"][1]["met"] == false);
  CHECK_THAT(v["text"].get<std::string>(), Catch::Contains("misses the SLO: e2e p99 "));
}

TEST_CASE("compare and tune --fail-on: a policy's verdict, tune's answer under the SLO") {
  const fs::path dir = headroom::test::temp_dir("fail-on-compare-tune");
  const fs::path busy = scenario_file(dir, "busy", 400, "compare: [engine, static_fraction]\n");
  auto c = run_headroom("compare " + q(busy) + " -j 1 --fail-on overload -o " + q(dir / "compare"));
  INFO(c.output);
  CHECK(c.exit_code == 3);
  CHECK_THAT(c.output, Catch::Contains("headroom: --fail-on: engine: overload (39 of 40 requests"));
  CHECK_THAT(c.output, Catch::Contains("    overloaded: 39 of 40 requests (98 %) still waiting at the last arrival"));
  const nlohmann::json j = read_json(dir / "compare" / "comparison.json");
  CHECK(j["policies"][0]["overloaded"] == true);
  CHECK(j["policies"][0]["slo_met"].is_null());
  CHECK(j["policies"][0]["verdict"] == "no OOM; overloaded");

  // No OOM in 0.5 .. 0.9: the memory's answer is 0.89 (0.01 below 0.9). Under a loose SLO it is
  // checked by one more run and kept; under one no run can meet, no value is the answer.
  const std::string tune_args = " --knob gpu_memory_utilization --range 0.5:0.9 --points 2 --stress none -j 1 --fail-on slo -o ";
  const fs::path loose = scenario_file(dir, "loose", 2, "slo: {e2e_p99_s: 10}\n");
  auto l = run_headroom("tune " + q(loose) + tune_args + q(dir / "loose"));
  INFO(l.output);
  CHECK(l.exit_code == 0);
  CHECK_THAT(l.output, Catch::Contains("  use          --gpu-memory-utilization 0.89 ("));
  CHECK_THAT(l.output, Catch::Contains("; it meets the SLO on the base variant)"));
  nlohmann::json t = read_json(dir / "loose" / "tune.json");
  CHECK(t["simulations"] == 3);  // two grid points and the answer's check
  CHECK(t["answer"]["value"] == 0.89);
  CHECK(t["answer"]["checked"] == true);
  CHECK(t["answer"]["slo_met"] == true);
  CHECK(t["frontier"][0]["slo_met"] == true);
  CHECK(t["frontier"][0]["overloaded"] == false);

  const fs::path tight = scenario_file(dir, "tight", 2, "slo: {e2e_p99_s: 0.01}\n");
  auto u = run_headroom("tune " + q(tight) + tune_args + q(dir / "tight"));
  INFO(u.output);
  CHECK(u.exit_code == 3);
  CHECK_THAT(u.output, Catch::Contains("  use          none: 0.89 misses the SLO (e2e p99 "));
  CHECK_THAT(u.output, Catch::Contains("no grid value on its safe side meets it"));
  CHECK_THAT(u.output, Catch::Contains("headroom: --fail-on: slo (0.89 misses the SLO"));
  t = read_json(dir / "tight" / "tune.json");
  CHECK(t["answer"]["value"].is_null());
  CHECK(t["answer"]["memory_value"] == 0.89);
  CHECK(t["answer"]["slo_met"] == false);
  CHECK(t["frontier"][0]["slo_met"] == false);
  CHECK(slurp(dir / "tight" / "frontier.csv").find(",0,0,\"\"\n") != std::string::npos);  // slo_met 0, overloaded 0
}

TEST_CASE("fail-on: an unknown condition, and slo without an SLO, are bad input (exit 2, nothing written)") {
  const fs::path dir = headroom::test::temp_dir("fail-on-bad");
  const fs::path calm = scenario_file(dir, "calm", 2, "");
  auto r = run_headroom("run " + q(calm) + " --no-progress --fail-on oom,overlaod -o " + q(dir / "a"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--fail-on: 'overlaod' is not one of oom, slo, overload (comma-separated, e.g. "
                                       "--fail-on oom,slo); did you mean 'overload'?"));
  CHECK_FALSE(fs::exists(dir / "a"));
  auto s = run_headroom("tune " + q(calm) + " --knob gpu_memory_utilization --range 0.5:0.9 --fail-on slo -o " + q(dir / "b"));
  CHECK(s.exit_code == 2);
  CHECK_THAT(s.output, Catch::Contains("--fail-on slo: the scenario sets no slo:"));
  CHECK_FALSE(fs::exists(dir / "b"));
}
