// The serving loop's step time includes the collectives of tensor parallelism as the engine set
// them up (sim/scenario/simulation.cpp): one request of Llama-3.1-8B at tp 2 on H100 SXM, with
// vLLM's custom all-reduce and without it, is slower without it by the worked difference of one
// one-shot kernel and one NCCL ring per all-reduce.
#include <catch2/catch.hpp>

#include <string>

#include "sim/scenario/outcome.hpp"
#include "sim/scenario/scenario.hpp"

using namespace headroom;

namespace {

// The e2e latency of the scenario's one request.
Seconds one_request_e2e(const std::string& parallel) {
  const scenario::Scenario sc = scenario::parse_scenario(
      "name: comm\n"
      "gpu: {profile: h100-sxm-80gb}\n"
      "model: {name: Llama-3.1-8B, tp: 2}\n"
      "engine: {kind: vllm, enforce_eager: true}\n" +
          parallel +
          "workload: {synthetic: {requests: 1, arrivals: {process: poisson, rate: 1}, "
          "input: {dist: fixed, value: 64}, output: {dist: fixed, value: 4}}}\n",
      "comm.yaml", "/tmp");
  Seconds e2e = -1;
  scenario::SimulateOptions opt;
  opt.on_request = [&](const engine::RequestRecord& r) { e2e = r.e2e_s; };
  scenario::simulate(sc, sc.policy, opt);
  return e2e;
}

}  // namespace

TEST_CASE("a tp 2 step pays its all-reduces: the custom one-shot kernel, or NCCL's ring without it") {
  const Seconds custom = one_request_e2e("");
  const Seconds nccl = one_request_e2e("parallel: {custom_all_reduce: false}\n");
  // 4 steps (the prefill of 64 tokens and 3 decodes), each with 1 + 2 × 32 all-reduces of
  // 64 × 4096 × 2 B or 4096 × 2 B; on 2 ranks the one-shot kernel costs 6 µs + S / busBw and the
  // ring 6 + 2 × 1.5 µs + S / busBw: 3 µs more each, whatever S. The logits' all-gather is NCCL's
  // in both.
  CHECK(nccl - custom == Approx(4 * 65 * 3e-6).epsilon(1e-6));
}
