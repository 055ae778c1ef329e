// Fitting the step-latency coefficients: recovery of known coefficients from synthetic steps
// (exact without noise, close with ±1 % noise), physical bounds, coefficients no step
// determines, the per-term error report, and bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/latency/fit.hpp"
#include "sim/model/catalogue.hpp"
#include "tests/latency/llama_h100.hpp"

using namespace headroom;
using namespace headroom::latency;
using headroom::test::llama_h100;

namespace {

// Coefficients unlike the built-in defaults, so that recovering them means something.
device::LatencyCoefficients truth() {
  device::LatencyCoefficients c;
  c.gemm_peak_efficiency = 0.62;
  c.gemm_half_efficiency_tokens = 96;
  c.memory_efficiency = 0.86;
  c.attention_efficiency = 0.41;
  c.step_overhead_s = 0.0031;
  c.graph_overhead_s = 0.00035;
  return c;
}

// What a calibration run measures: prefill chunks of several sizes over empty and long cached
// contexts, decode batches of several sizes and contexts, eager and graph-replayed, and mixed steps.
std::vector<Batch> design() {
  std::vector<Batch> batches;
  for (std::int64_t tokens : {8, 32, 128, 512, 2048, 8192})
    for (std::int64_t cached : {0, 16384, 65536}) {
      Batch b;
      b.add_prefill(tokens, cached);
      batches.push_back(b);
    }
  for (std::int64_t sequences : {1, 4, 16, 64, 256, 512})
    for (std::int64_t context : {128, 4096, 32768})
      for (bool graph : {false, true}) {
        Batch b;
        b.cuda_graph = graph;
        for (std::int64_t i = 0; i < sequences; ++i) b.add_decode(context);
        batches.push_back(b);
      }
  for (std::int64_t sequences : {8, 64}) {
    Batch b;
    b.add_prefill(1024, 2048);
    for (std::int64_t i = 0; i < sequences; ++i) b.add_decode(4096);
    batches.push_back(b);
  }
  return batches;
}

// Steps timed by the model itself under `c`, each scaled by 1 + u, u uniform in ±noise.
std::vector<MeasuredStep> synthetic(const StepLatencyModel& m, const device::LatencyCoefficients& c, double noise,
                                    const std::vector<Batch>& batches) {
  Rng rng(20240611);
  std::vector<MeasuredStep> steps;
  for (const Batch& b : batches)
    steps.push_back({b, step_seconds(m.terms(b, c), c) * (1 + rng.uniform(-noise, noise))});
  return steps;
}

std::string error_of(const StepLatencyModel& m, const std::vector<MeasuredStep>& steps) {
  try {
    fit_latency(m, steps, m.coefficients());
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the fit recovers the coefficients exactly from noise-free steps") {
  // A dense GQA model, a MoE model (experts touched per step) and an MLA + MoE model.
  struct Served {
    const char* model;
    int tp;
    model::DType weights;
  };
  const Served served = GENERATE(Served{"Llama-3.1-8B", 1, model::DType::bf16},
                                 Served{"Qwen3-30B-A3B", 1, model::DType::bf16},
                                 Served{"DeepSeek-V3", 8, model::DType::fp8});
  INFO(served.model);
  const StepLatencyModel m(model::catalogue_model(served.model), served.tp, model::KvCacheDtype::model,
                           served.weights, device::load_gpu_profile("h100-sxm-80gb"));
  const auto want = truth();
  const LatencyFit fit = fit_latency(m, synthetic(m, want, 0, design()), m.coefficients());
  const auto& got = fit.coefficients;
  CHECK(got.fitted);
  CHECK(got.gemm_peak_efficiency == Approx(want.gemm_peak_efficiency).epsilon(1e-6));
  CHECK(got.gemm_half_efficiency_tokens == Approx(want.gemm_half_efficiency_tokens).epsilon(1e-6));
  CHECK(got.memory_efficiency == Approx(want.memory_efficiency).epsilon(1e-6));
  CHECK(got.attention_efficiency == Approx(want.attention_efficiency).epsilon(1e-6));
  CHECK(got.step_overhead_s == Approx(want.step_overhead_s).epsilon(1e-6));
  CHECK(got.graph_overhead_s == Approx(want.graph_overhead_s).epsilon(1e-6));
  CHECK(fit.mape < 1e-9);
  // Every coefficient the steps depend on is fitted; the kernel floor and the serial attention side
  // are not in these steps (the profile has neither), so they keep their 0.
  CHECK(fit.kept == std::vector<std::string_view>{"kernel_floor_s", "attention_token_s"});
  CHECK(got.kernel_floor_s == 0);
  CHECK(got.attention_token_s == 0);
}

TEST_CASE("the fit recovers the coefficients from steps with 1 % noise") {
  const StepLatencyModel m = llama_h100();
  const auto want = truth();
  const std::vector<MeasuredStep> steps = synthetic(m, want, 0.01, design());
  const LatencyFit fit = fit_latency(m, steps, m.coefficients());
  const auto& got = fit.coefficients;
  CHECK(got.gemm_peak_efficiency == Approx(want.gemm_peak_efficiency).epsilon(0.03));
  CHECK(got.gemm_half_efficiency_tokens == Approx(want.gemm_half_efficiency_tokens).epsilon(0.2));
  CHECK(got.memory_efficiency == Approx(want.memory_efficiency).epsilon(0.03));
  CHECK(got.attention_efficiency == Approx(want.attention_efficiency).epsilon(0.03));
  CHECK(got.step_overhead_s == Approx(want.step_overhead_s).epsilon(0.1));
  CHECK(got.graph_overhead_s == Approx(want.graph_overhead_s).epsilon(0.2));
  // Uniform noise of ±1 % has a mean absolute value of 0.5 %; the fit cannot do much better.
  CHECK(fit.mape < 0.01);
  CHECK(fit.mape > 0.003);
  std::size_t points = 0;
  for (const TermError& e : fit.by_term) {
    INFO(e.term << ": " << e.points << " points, MAPE " << e.mape);
    points += e.points;
    CHECK(e.mape < 0.01);
  }
  CHECK(points == steps.size());
  CHECK(fit.by_term[0].term == "gemm compute");
  CHECK(fit.by_term[0].points > 0);  // long prefills
  CHECK(fit.by_term[1].points > 0);  // small decode batches
  CHECK(fit.by_term[2].points > 0);  // long-context decode
}

TEST_CASE("fitted efficiencies never exceed 1 and overheads never go below 0") {
  // Steps twice as fast as the GPU's datasheet allows: the fit clamps at the physical bounds.
  const StepLatencyModel m = llama_h100();
  device::LatencyCoefficients ideal;
  ideal.gemm_peak_efficiency = 1;
  ideal.gemm_half_efficiency_tokens = 0;
  ideal.memory_efficiency = 1;
  ideal.attention_efficiency = 1;
  ideal.step_overhead_s = 0;
  ideal.graph_overhead_s = 0;
  std::vector<MeasuredStep> steps = synthetic(m, ideal, 0, design());
  for (MeasuredStep& s : steps) s.seconds /= 2;
  const auto got = fit_latency(m, steps, m.coefficients()).coefficients;
  CHECK(got.gemm_peak_efficiency == 1);
  CHECK(got.memory_efficiency == 1);
  CHECK(got.attention_efficiency == 1);
  CHECK(got.gemm_half_efficiency_tokens == 0);
  CHECK(got.step_overhead_s == 0);
  CHECK(got.graph_overhead_s == 0);
}

TEST_CASE("coefficients no measured step depends on keep their starting values") {
  // Eager decode steps of small batches: memory-bound GEMMs and attention, eager overhead only.
  const StepLatencyModel m = llama_h100();
  std::vector<Batch> batches;
  for (std::int64_t sequences : {1, 2, 4, 8})
    for (std::int64_t context : {256, 8192}) {
      Batch b;
      for (std::int64_t i = 0; i < sequences; ++i) b.add_decode(context);
      batches.push_back(b);
    }
  const auto want = truth();
  const LatencyFit fit = fit_latency(m, synthetic(m, want, 0, batches), m.coefficients());
  CHECK(fit.kept == std::vector<std::string_view>{"gemm_peak_efficiency", "gemm_half_efficiency_tokens",
                                                  "attention_efficiency", "graph_overhead_s", "kernel_floor_s",
                                                  "attention_token_s"});
  const auto& start = m.coefficients();
  CHECK(fit.coefficients.gemm_peak_efficiency == start.gemm_peak_efficiency);
  CHECK(fit.coefficients.gemm_half_efficiency_tokens == start.gemm_half_efficiency_tokens);
  CHECK(fit.coefficients.attention_efficiency == start.attention_efficiency);
  CHECK(fit.coefficients.graph_overhead_s == start.graph_overhead_s);
  CHECK(fit.coefficients.memory_efficiency == Approx(want.memory_efficiency).epsilon(1e-6));
  CHECK(fit.coefficients.step_overhead_s == Approx(want.step_overhead_s).epsilon(1e-6));
  CHECK(fit.by_term[1].points == batches.size());  // all "gemm memory"
}

TEST_CASE("bad measured steps are input errors") {
  const StepLatencyModel m = llama_h100();
  Batch one;
  one.add_decode(100);
  CHECK(error_of(m, {}) == "latency fit: no measured steps");
  CHECK(error_of(m, {{one, 0.01}, {Batch{}, 0.01}}) == "latency fit: measured step 1: the batch is empty");
  CHECK(error_of(m, {{one, -0.5}}) == "latency fit: measured step 0: expected a positive time in seconds, got -0.5");
  CHECK(error_of(m, {{one, 0.01}, {one, std::nan("")}}) ==
        "latency fit: measured step 1: expected a positive time in seconds, got nan");
  CHECK(error_of(m, {{one, 0.01}}) ==
        "latency fit: the measured steps depend on 2 coefficients, which need at least 2 steps, got 1");
}
