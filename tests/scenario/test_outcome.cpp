// One simulation, one result: `scenario::simulate` fills the Outcome that run's summary.json and
// verdict, compare's rows, sweep and tune read. Its figures are the serving result's and the
// requests' own, and the summary reads them unchanged.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/run_report.hpp"
#include "sim/scenario/comparison.hpp"
#include "sim/scenario/outcome.hpp"
#include "sim/scenario/scenario.hpp"

using namespace headroom;

namespace {

scenario::Scenario small_scenario(const std::string& engine) {
  return scenario::parse_scenario(
      "name: outcome\n"
      "gpu: {profile: h100-sxm-80gb}\n"
      "model: {name: Llama-3.1-8B}\n"
      "engine: {kind: " + engine + "}\n"
      "workload: {synthetic: {requests: 600, arrivals: {process: gamma, rate: 20, cv: 3}, "
      "input: {dist: lognormal, mean: 3000, cv: 1, max: 16000}, output: {dist: lognormal, mean: 200, cv: 1, max: 1024}}}\n",
      "outcome.yaml", "/tmp");
}

}  // namespace

TEST_CASE("simulate: the outcome's latency and throughput are the requests' own, and summary.json reads them") {
  for (const char* engine : {"vllm", "sglang", "lightllm"}) {
    INFO(engine);
    const scenario::Scenario sc = small_scenario(engine);
    int started_calls = 0;
    std::int64_t records = 0, with_ttft = 0, with_tpot = 0;
    scenario::SimulateOptions opt;
    opt.on_started = [&](const policy::PolicyStart& s) {
      CHECK(records == 0);  // before any request is served
      CHECK(s.startup.ok);
      ++started_calls;
    };
    opt.on_request = [&](const engine::RequestRecord& r) {
      ++records;
      if (!r.aborted && r.ttft_s >= 0) ++with_ttft;
      if (!r.aborted && r.tpot_s >= 0) ++with_tpot;
    };
    const scenario::Outcome o = scenario::simulate(sc, sc.policy, opt);
    CHECK(started_calls == 1);
    REQUIRE(o.started());
    REQUIRE(o.serving);
    const engine::ServingResult& s = *o.serving;
    CHECK(s.arrived == 600);
    CHECK(records == s.completed + s.aborted + s.rejected);
    CHECK(static_cast<std::int64_t>(o.ttft.count) == with_ttft);
    CHECK(static_cast<std::int64_t>(o.tpot.count) == with_tpot);
    REQUIRE(s.end_time_s > 0);
    CHECK(o.tokens_per_s == static_cast<double>(s.generated_tokens) / s.end_time_s);
    CHECK(o.requests_per_s == static_cast<double>(s.completed) / s.end_time_s);
    CHECK(s.steps > 0);
    CHECK(s.graph_steps <= s.steps);

    const report::RunContext run{sc.name, "an engine", sc.model.name, sc.gpu.name, sc.gpu.source, sc.gpu.capacity_bytes};
    const nlohmann::json j = report::summary_json(run, o);
    CHECK(j["requests"]["arrived"] == s.arrived);
    CHECK(j["requests"]["completed"] == s.completed);
    CHECK(j["steps"]["total"] == s.steps);
    CHECK(j["throughput"]["output_tokens_per_s"].get<double>() == o.tokens_per_s);
    CHECK(j["metrics"]["ttft_s"]["count"] == o.ttft.count);
    CHECK(j["startup"]["kv_tokens"] == o.start.startup.kv_tokens);
    // compare's row of the same outcome says the same.
    const report::ComparisonRow row = scenario::comparison_row(o, false);
    CHECK(row.completed == s.completed);
    CHECK(row.kv_tokens == o.start.startup.kv_tokens);
    CHECK(row.tokens_per_s == o.tokens_per_s);
    CHECK(row.ttft.p50 == o.ttft.p50);
  }
}

TEST_CASE("simulate: a start-up failure is an outcome without serving, and the verdict says where it failed") {
  // 70B parameters in bf16 (~141 GB) do not fit one 80 GB H100: the weights fail to load.
  const scenario::Scenario sc = scenario::parse_scenario(
      "name: big\n"
      "gpu: {profile: h100-sxm-80gb}\n"
      "model: {name: Llama-3.1-70B}\n"
      "engine: {kind: vllm}\n"
      "workload: {synthetic: {requests: 10, arrivals: {process: poisson, rate: 1}, "
      "input: {dist: fixed, value: 100}, output: {dist: fixed, value: 10}}}\n",
      "big.yaml", "/tmp");
  bool served = false;
  scenario::SimulateOptions opt;
  opt.on_request = [&](const engine::RequestRecord&) { served = true; };
  const scenario::Outcome o = scenario::simulate(sc, sc.policy, opt);
  REQUIRE_FALSE(o.started());
  CHECK_FALSE(o.serving);
  CHECK_FALSE(served);
  CHECK(o.failed());
  const report::RunContext run{sc.name, "vLLM", sc.model.name, sc.gpu.name, sc.gpu.source, sc.gpu.capacity_bytes};
  const nlohmann::json j = report::summary_json(run, o);
  CHECK(j["startup"]["ok"] == false);
  CHECK(j["requests"]["arrived"] == 0);
  CHECK(j["startup"]["kv_tokens"] == 0);
  CHECK(report::verdict(run, o).rfind("vLLM on h100-sxm-80gb with Llama-3.1-70B fails at start-up (load weights): ", 0) == 0);
}
