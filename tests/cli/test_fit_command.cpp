// `headroom fit` on the hand-made measured profile (tests/latency/data/, generated from known
// coefficients): the fitted values, the residual report, the profile written back atomically and
// usable by a scenario by path, and bad input leaving the profile untouched.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/device/gpu_profile.hpp"
#include "tests/support/test_data.hpp"

using headroom::test::run_headroom;
using headroom::test::q;
using headroom::test::slurp;
using headroom::test::write;
namespace fs = std::filesystem;

namespace {

// The hand-made profile and its measurements, copied into a fresh folder.
fs::path handmade(const std::string& tag) {
  const fs::path data = fs::path(HEADROOM_SOURCE_DIR) / "tests/latency/data";
  const fs::path dir = headroom::test::temp_dir(tag);
  fs::copy_file(data / "handmade-h100.yaml", dir / "handmade-h100.yaml");
  fs::copy_file(data / "handmade-h100.measurements.csv", dir / "handmade-h100.measurements.csv");
  return dir;
}

}  // namespace

TEST_CASE("fit recovers the hand-made coefficients and writes them into a copy of the profile") {
  const fs::path dir = handmade("fit-out");
  fs::create_directories(dir / "fitted");
  const std::string original = slurp(dir / "handmade-h100.yaml");
  auto r = run_headroom("fit " + q(dir / "handmade-h100.yaml") + " -o " + q(dir / "fitted/h100.yaml"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("78 measured kernels from"));
  CHECK_THAT(r.output, Catch::Contains("  gemm_peak_efficiency                 0.75         0.62\n"));
  CHECK_THAT(r.output, Catch::Contains("  gemm_half_efficiency_tokens           128           96\n"));
  CHECK_THAT(r.output, Catch::Contains("  memory_efficiency                     0.8         0.86\n"));
  CHECK_THAT(r.output,
             Catch::Contains("  attention_efficiency                  0.5          0.5  kept: no measurement determines it"));
  CHECK_THAT(r.output, Catch::Contains("  step_overhead_s                     0.002        0.002  kept"));
  CHECK_THAT(r.output, Catch::Contains("  all                             0.00 %     78 points"));
  CHECK_THAT(r.output, Catch::Contains("  kind gemm                       0.00 %     32 points"));
  CHECK_THAT(r.output, Catch::Contains("  kind attention                  0.00 %     40 points"));
  CHECK_THAT(r.output, Catch::Contains("  kind stream                     0.00 %      6 points"));
  CHECK(slurp(dir / "handmade-h100.yaml") == original);  // -o leaves the input alone

  const auto fitted = headroom::device::load_gpu_profile((dir / "fitted/h100.yaml").string());
  CHECK(fitted.source == "measured");
  CHECK(fitted.latency.fitted);
  CHECK(fitted.latency.gemm_peak_efficiency == Approx(0.62).epsilon(1e-6));
  CHECK(fitted.latency.memory_efficiency == Approx(0.86).epsilon(1e-6));
  // The measurement file stays where it was, named from the new profile's folder.
  REQUIRE(fitted.calibration);
  CHECK(fitted.calibration->measurements == "../handmade-h100.measurements.csv");
  CHECK(fitted.free_at_start_bytes == 84'492'025'856);

  // Fitting the fitted profile again reads the measurements through that relative path.
  auto again = run_headroom("fit " + q(dir / "fitted/h100.yaml"));
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.output, Catch::Contains("  gemm_peak_efficiency                 0.62         0.62\n"));
}

TEST_CASE("a scenario runs on a fitted measured profile given by path") {
  const fs::path dir = handmade("fit-scenario");
  REQUIRE(run_headroom("fit " + q(dir / "handmade-h100.yaml")).exit_code == 0);
  write(dir / "s.yaml", "name: measured\ngpu: {profile: " + (dir / "handmade-h100.yaml").string() +
                            "}\nmodel: {name: Llama-3.1-8B}\nengine: {kind: vllm}\n"
                            "workload:\n  synthetic:\n    requests: 50\n    arrivals: {process: poisson, rate: 10}\n"
                            "    input: {dist: fixed, value: 500}\n    output: {dist: fixed, value: 20}\n");
  auto r = run_headroom("run " + q(dir / "s.yaml") + " -o " + q(dir / "out") + " --no-progress");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("vLLM on handmade-h100 (measured), Llama-3.1-8B"));
  CHECK_THAT(r.output, Catch::Contains("requests         50 arrived, 50 completed"));
}

TEST_CASE("fit: a bad measurement file or a profile without measurements exits 2 and writes nothing") {
  const fs::path dir = handmade("fit-bad");
  const std::string original = slurp(dir / "handmade-h100.yaml");
  std::string csv = slurp(dir / "handmade-h100.measurements.csv");
  csv += "gemm,broken row,1e9,2e6,64,soon\n";
  write(dir / "handmade-h100.measurements.csv", csv);
  auto r = run_headroom("fit " + q(dir / "handmade-h100.yaml"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("handmade-h100.measurements.csv:91: column 6 (seconds): expected a non-negative "
                                       "number, got 'soon'"));
  CHECK(slurp(dir / "handmade-h100.yaml") == original);

  auto builtin = run_headroom("fit h100-sxm-80gb");
  CHECK(builtin.exit_code == 2);
  CHECK_THAT(builtin.output, Catch::Contains("h100-sxm-80gb: no such file (headroom fit takes the path of a measured "
                                             "profile YAML"));

  write(dir / "datasheet.yaml", slurp(fs::path(HEADROOM_SOURCE_DIR) / "sim/device/profiles/l40s.yaml"));
  auto no_csv = run_headroom("fit " + q(dir / "datasheet.yaml"));
  CHECK(no_csv.exit_code == 2);
  CHECK_THAT(no_csv.output, Catch::Contains("datasheet.yaml: key 'calibration.measurements': missing"));
}

TEST_CASE("fit on the measured H100 (../shared/gpu): within 10 % overall and 15 % on each kind of kernel") {
  // The calibration's own profile and CSV stay in ../shared/gpu; the fitted copy goes to a temp folder.
  const fs::path shared = headroom::test::gpu_file("h100-2026-11-25/h100.yaml");
  const fs::path dir = headroom::test::temp_dir("fit-measured-h100");
  auto r = run_headroom("fit " + q(shared) + " -o " + q(dir / "h100-fitted.yaml"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("350 measured kernels from"));
  CHECK_THAT(r.output, Catch::Contains("  all                             8.77 %    350 points"));
  CHECK_THAT(r.output, Catch::Contains("  kind gemm                       7.18 %    264 points"));
  CHECK_THAT(r.output, Catch::Contains("  kind attention                 14.17 %     80 points"));
  CHECK_THAT(r.output, Catch::Contains("  kind stream                     6.77 %      6 points"));
  CHECK_THAT(r.output, Catch::Contains("  step_overhead_s                     0.002        0.002  kept"));
  const auto fitted = headroom::device::load_gpu_profile((dir / "h100-fitted.yaml").string());
  const auto builtin = headroom::device::load_gpu_profile("h100-80gb-hbm3-measured");
  CHECK(fitted.latency.attention_efficiency == Approx(builtin.latency.attention_efficiency).epsilon(1e-6));
  CHECK(fitted.latency.kernel_floor_s == Approx(builtin.latency.kernel_floor_s).epsilon(1e-6));
  CHECK(fitted.latency.attention_token_s == Approx(builtin.latency.attention_token_s).epsilon(1e-6));
  fs::remove_all(dir);
}
