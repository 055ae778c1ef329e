// The latency model held against the first real-GPU measurements (issue 19 item 4): the 350
// kernels headroom-calibrate timed on an H100 80GB HBM3 (../shared/gpu, read from there) are fitted
// within 10 % MAPE overall and 15 % on each kind of kernel, and the built-in measured profile
// carries that fit's coefficients.
#include <catch2/catch.hpp>

#include <string>

#include "sim/device/gpu_profile.hpp"
#include "sim/latency/fit.hpp"
#include "sim/latency/measurements.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::latency;

TEST_CASE("measured H100: the kernel model fits the 350 measured kernels within 10 % (15 % per kind)") {
  const auto dir = test::gpu_file("h100-2026-11-25");
  const device::GpuProfile measured = device::load_gpu_profile((dir / "h100.yaml").string());
  const std::vector<MeasuredKernel> kernels = fit_kernels_of(read_measurements(dir / "h100.measurements.csv"));
  REQUIRE(kernels.size() == 350);
  const LatencyFit fit = fit_kernels(measured, kernels, measured.latency);
  INFO("MAPE " << fit.mape << ", gemm " << fit.by_kind[0].mape << ", attention " << fit.by_kind[1].mape
               << ", stream " << fit.by_kind[2].mape);
  CHECK(fit.mape <= 0.10);
  CHECK(fit.by_kind[0].points == 264);
  CHECK(fit.by_kind[1].points == 80);
  CHECK(fit.by_kind[2].points == 6);
  for (const TermError& e : fit.by_kind) CHECK(e.mape <= 0.15);
  // Every term the kernels determine is fitted; only the engine-step overheads are kept.
  CHECK(fit.kept == std::vector<std::string_view>{"step_overhead_s", "graph_overhead_s"});

  // The built-in profile is this fit, on the calibration's own peaks and memory figures.
  const device::GpuProfile builtin = device::load_gpu_profile("h100-80gb-hbm3-measured");
  CHECK(builtin.source == "measured");
  REQUIRE(builtin.calibration);
  CHECK(builtin.calibration->device == measured.calibration->device);
  CHECK(builtin.calibration->date == measured.calibration->date);
  CHECK(builtin.capacity_bytes == measured.capacity_bytes);
  CHECK(builtin.context_bytes == measured.context_bytes);
  CHECK(builtin.granularity_bytes == measured.granularity_bytes);
  CHECK(builtin.bandwidth_bytes_per_s == measured.bandwidth_bytes_per_s);
  CHECK(builtin.dense_bf16_flops_per_s == measured.dense_bf16_flops_per_s);
  const device::LatencyCoefficients& c = builtin.latency;
  const device::LatencyCoefficients& f = fit.coefficients;
  CHECK(c.fitted);
  CHECK(c.gemm_peak_efficiency == Approx(f.gemm_peak_efficiency).epsilon(1e-4));
  CHECK(c.gemm_half_efficiency_tokens == Approx(f.gemm_half_efficiency_tokens).epsilon(1e-4));
  CHECK(c.memory_efficiency == Approx(f.memory_efficiency).epsilon(1e-4));
  CHECK(c.attention_efficiency == Approx(f.attention_efficiency).epsilon(1e-4));
  CHECK(c.kernel_floor_s == Approx(f.kernel_floor_s).epsilon(1e-4));
  CHECK(c.attention_token_s == Approx(f.attention_token_s).epsilon(1e-4));
}
