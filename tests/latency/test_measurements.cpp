// The calibration measurement file (measurements.hpp) and the kernel-level fit (fit.hpp
// fit_kernels): a known-answer test on the hand-made file tests/latency/data/, and bad rows.
#include <catch2/catch.hpp>

#include <string>

#include "sim/core/error.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/latency/fit.hpp"
#include "sim/latency/measurements.hpp"

using namespace headroom;
using namespace headroom::latency;

namespace {

const std::string kData = std::string(HEADROOM_SOURCE_DIR) + "/tests/latency/data/";

std::string error_of(const std::string& text) {
  try {
    parse_measurements(text, "m.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const std::string kHead = "# headroom measurements v1\nkind,label,flops,bytes,rows,seconds\n";

}  // namespace

TEST_CASE("the hand-made measurement file reads every row with its kind") {
  const auto rows = read_measurements(kData + "handmade-h100.measurements.csv");
  REQUIRE(rows.size() == 83);
  CHECK(rows[0].kind == MeasurementKind::gemm);
  CHECK(rows[0].label == "qkv_proj m=1 n=6144 k=4096");
  CHECK(rows[0].flops == 50331648.0);
  CHECK(rows[0].rows == 1);
  CHECK(rows[0].line == 8);
  CHECK(rows.back().kind == MeasurementKind::release_cached);
  // 32 GEMMs, 40 attention kernels, 6 streams are fitted; the 5 driver rows are not.
  CHECK(fit_kernels_of(rows).size() == 78);
}

TEST_CASE("the kernel fit recovers the coefficients the hand-made file was generated from") {
  const device::GpuProfile profile = device::load_gpu_profile(kData + "handmade-h100.yaml");
  const auto kernels = fit_kernels_of(read_measurements(kData + "handmade-h100.measurements.csv"));
  const LatencyFit fit = fit_kernels(profile, kernels, profile.latency);
  const auto& c = fit.coefficients;
  CHECK(c.fitted);
  CHECK(c.gemm_peak_efficiency == Approx(0.62).epsilon(1e-6));
  CHECK(c.gemm_half_efficiency_tokens == Approx(96).epsilon(1e-6));
  CHECK(c.memory_efficiency == Approx(0.86).epsilon(1e-6));
  // Grouped-query decode attention reads hq/hkv = 4-8 query heads per KV byte: far below the
  // ridge point, so every attention kernel is memory-bound and attention_efficiency is not seen.
  // No kernel measures an engine step's overhead either, and the file (generated without a serial
  // attention side) puts no kernel there: all four keep the profile's values.
  CHECK(fit.kept == std::vector<std::string_view>{"attention_efficiency", "step_overhead_s", "graph_overhead_s",
                                                  "attention_token_s"});
  CHECK(c.kernel_floor_s == Approx(0).margin(1e-12));  // generated without a floor
  CHECK(c.attention_efficiency == profile.latency.attention_efficiency);
  CHECK(c.step_overhead_s == profile.latency.step_overhead_s);
  CHECK(c.graph_overhead_s == profile.latency.graph_overhead_s);
  CHECK(fit.mape < 1e-9);
  REQUIRE(fit.point_errors.size() == kernels.size());
  // Small GEMMs and the streams are memory-bound, long prefills compute-bound, attention its own.
  CHECK(fit.by_term[0].points > 0);
  CHECK(fit.by_term[1].points > 0);
  CHECK(fit.by_term[2].points == 40);
  CHECK(fit.by_term[3].points == 0);
}

TEST_CASE("a GEMM that is 10 % slower than the model shows in its residual") {
  const device::GpuProfile profile = device::load_gpu_profile(kData + "handmade-h100.yaml");
  auto kernels = fit_kernels_of(read_measurements(kData + "handmade-h100.measurements.csv"));
  kernels[7].seconds *= 1.1;  // qkv_proj at 16384 tokens
  const LatencyFit fit = fit_kernels(profile, kernels, profile.latency);
  CHECK(fit.mape > 0);
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < fit.point_errors.size(); ++i)
    if (fit.point_errors[i] > worst) worst = fit.point_errors[i], at = i;
  CHECK(at == 7);
  CHECK(worst > 0.05);
}

TEST_CASE("malformed measurement files are input errors naming the line and column") {
  CHECK(error_of("") == "m.csv: empty; expected the first line '# headroom measurements v1'");
  CHECK(error_of("kind,label\n") ==
        "m.csv:1: expected the first line '# headroom measurements v1' (a headroom measurement file), got 'kind,label'");
  CHECK(error_of("# headroom measurements v1\n# only comments\n") ==
        "m.csv: no column names line 'kind,label,flops,bytes,rows,seconds'");
  CHECK(error_of("# headroom measurements v1\nkind,flops\n") ==
        "m.csv:2: expected the column names 'kind,label,flops,bytes,rows,seconds', got 'kind,flops'");
  CHECK(error_of(kHead + "gemm,x,1,2,3\n") ==
        "m.csv:3: expected 6 comma-separated fields (kind,label,flops,bytes,rows,seconds), got 5");
  CHECK(error_of(kHead + "gem,x,1,2,3,4\n") ==
        "m.csv:3: column 1 (kind): expected gemm, attention, stream, malloc, free or release_cached, got 'gem'");
  CHECK(error_of(kHead + "gemm,x,1e9,2e6,abc,1e-3\n") ==
        "m.csv:3: column 5 (rows): expected a non-negative number, got 'abc'");
  CHECK(error_of(kHead + "gemm,x,1e9,2e6,0,1e-3\n") ==
        "m.csv:3: column 5 (rows): gemm rows need their rows M (at least 1), got '0'");
  CHECK(error_of(kHead + "attention,x,0,2e6,0,1e-3\n") ==
        "m.csv:3: column 3 (flops): attention rows need their FLOPs, got '0'");
  CHECK(error_of(kHead + "stream,x,0,2e6,0,0\n") == "m.csv:3: column 6 (seconds): expected a positive time, got '0'");
  CHECK(error_of(kHead + "stream,x,0,-5,0,1\n") ==
        "m.csv:3: column 4 (bytes): expected a non-negative number, got '-5'");
  CHECK(error_of(kHead + "stream,x,0,nan,0,1\n") ==
        "m.csv:3: column 4 (bytes): expected a non-negative number, got 'nan'");
}

TEST_CASE("the kernel fit refuses kernels without what it needs") {
  const device::GpuProfile profile = device::load_gpu_profile("h100-sxm-80gb");
  auto error = [&](std::vector<MeasuredKernel> k) {
    try {
      fit_kernels(profile, k, profile.latency);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error({}) == "latency fit: no measured kernels");
  CHECK(error({{KernelKind::stream, 0, 1e6, 0, -1}}) ==
        "latency fit: measured kernel 0: expected a positive time in seconds, got -1");
  CHECK(error({{KernelKind::gemm, 1e9, 1e6, 0, 1e-3}}) ==
        "latency fit: measured kernel 0: expected positive bytes and FLOPs and rows >= 1");
  CHECK(error({{KernelKind::stream, 0, 1e6, 0, 1e-3}, {KernelKind::gemm, 1e12, 1e6, 4096, 1e-3}}) ==
        "latency fit: the measured kernels depend on 4 coefficients, which need at least 4 kernels, got 2");
}
