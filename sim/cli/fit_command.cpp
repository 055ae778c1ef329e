// headroom fit PROFILE [-o OUT]: fits the step-latency coefficients of a measured GPU profile to
// the kernels the calibration program timed (its measurement CSV, named in the profile's
// `calibration.measurements`), writes them back into the profile (or OUT), and prints the
// coefficients before and after and the residuals (MAPE) per term and per kind of kernel.
#include <array>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "sim/cli/commands.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/latency/fit.hpp"
#include "sim/latency/measurements.hpp"

namespace headroom::cli {

namespace {

namespace fs = std::filesystem;

struct FitArgs {
  std::string profile;
  std::string output;
};

std::string percent(double fraction) { return fmt::format("{:.2f} %", 100 * fraction); }

void run_fit(const FitArgs& a) {
  const fs::path profile_path(a.profile);
  std::error_code ec;
  refuse_special_file(profile_path, "GPU profile");
  if (!fs::is_regular_file(profile_path, ec))
    throw InputError(fmt::format("{}: no such file (headroom fit takes the path of a measured profile YAML, "
                                 "as headroom-calibrate writes it)",
                                 a.profile));
  device::GpuProfile profile = device::load_gpu_profile(a.profile);
  if (!profile.calibration || profile.calibration->measurements.empty())
    throw InputError(fmt::format("{}: key 'calibration.measurements': missing; headroom fit needs the measurement "
                                 "file a calibration run wrote beside the profile",
                                 a.profile));
  const fs::path csv = profile_path.parent_path() / profile.calibration->measurements;
  const std::vector<latency::Measurement> measured = latency::read_measurements(csv);
  const std::vector<latency::MeasuredKernel> kernels = latency::fit_kernels_of(measured);
  if (kernels.empty())
    throw InputError(fmt::format("{}: no gemm, attention or stream rows to fit", csv.string()));

  const device::LatencyCoefficients before = profile.latency;
  const latency::LatencyFit fit = latency::fit_kernels(profile, kernels, before);

  const fs::path out_path = a.output.empty() ? profile_path : fs::path(a.output);
  device::GpuProfile fitted = profile;
  fitted.latency = fit.coefficients;
  // The measurement file stays where it is; name it relative to where the profile is written.
  const fs::path out_dir = fs::absolute(out_path).parent_path();
  fitted.calibration->measurements = fs::proximate(fs::absolute(csv), out_dir).generic_string();
  write_file_atomically(out_path, [&](std::ostream& o) { o << device::gpu_profile_yaml(fitted); });

  fmt::print("fit of {} ({}): {} measured kernels from {}\n", a.profile, profile.name, kernels.size(), csv.string());
  fmt::print("  {:<28} {:>12} {:>12}\n", "coefficient", "before", "fitted");
  auto row = [&](std::string_view name, double was, double now) {
    bool kept = false;
    for (std::string_view k : fit.kept) kept = kept || k == name;
    fmt::print("  {:<28} {:>12.6g} {:>12.6g}{}\n", name, was, now, kept ? "  kept: no measurement determines it" : "");
  };
  const auto& c = fit.coefficients;
  row("gemm_peak_efficiency", before.gemm_peak_efficiency, c.gemm_peak_efficiency);
  row("gemm_half_efficiency_tokens", before.gemm_half_efficiency_tokens, c.gemm_half_efficiency_tokens);
  row("attention_efficiency", before.attention_efficiency, c.attention_efficiency);
  row("memory_efficiency", before.memory_efficiency, c.memory_efficiency);
  row("step_overhead_s", before.step_overhead_s, c.step_overhead_s);
  row("graph_overhead_s", before.graph_overhead_s, c.graph_overhead_s);
  row("kernel_floor_s", before.kernel_floor_s, c.kernel_floor_s);
  row("attention_token_s", before.attention_token_s, c.attention_token_s);
  fmt::print("residuals (mean absolute percentage error)\n");
  fmt::print("  {:<28} {:>9} {:>6} points\n", "all", percent(fit.mape), kernels.size());
  for (const latency::TermError& e : fit.by_term)
    if (e.points > 0) fmt::print("  term {:<23} {:>9} {:>6} points\n", e.term, percent(e.mape), e.points);
  for (const latency::TermError& e : fit.by_kind)
    if (e.points > 0) fmt::print("  kind {:<23} {:>9} {:>6} points\n", e.term, percent(e.mape), e.points);
  fmt::print("written {}\n", out_path.string());
}

}  // namespace

void add_fit_command(CLI::App& app) {
  auto args = std::make_shared<FitArgs>();
  auto* cmd = app.add_subcommand("fit", "Fit a measured GPU profile's step-latency coefficients to its measurements");
  cmd->add_option("profile", args->profile, "A measured profile YAML written by headroom-calibrate")->required();
  cmd->add_option("-o,--output", args->output, "Write the fitted profile here instead of over PROFILE");
  cmd->callback([args] { run_fit(*args); });
}

}  // namespace headroom::cli
