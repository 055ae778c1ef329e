#pragma once
// Fits the step-latency coefficients of a GPU profile to measured steps (batch, seconds).
//
// With the side of every roofline fixed, a step's time is linear in
//   x = (1/gemm_peak_efficiency, gemm_half_efficiency_tokens/gemm_peak_efficiency,
//        1/memory_efficiency, 1/attention_efficiency, step_overhead_s, graph_overhead_s)
// (step_latency.hpp StepTerms). The fit alternates: fix the sides under the current
// coefficients, solve the linear least-squares problem, repeat until the sides stop changing.
// Rows are weighted by 1/measured, so it minimises relative error (steps span milliseconds to
// seconds). Physics bounds the solution: efficiencies are at most 1 (reciprocals at least 1) and
// the half-efficiency rows and overheads are non-negative; the bounded problem is solved exactly
// by Lawson & Hanson's active-set NNLS ("Solving Least Squares Problems", 1974, ch. 23) on
// x - lower bound. A coefficient no measured step depends on (say, no CUDA-graph steps) keeps
// its starting value and is listed in `kept`.
#include <array>
#include <span>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/latency/batch.hpp"
#include "sim/latency/step_latency.hpp"

namespace headroom::latency {

struct MeasuredStep {
  Batch batch;
  Seconds seconds = 0;
};

// Error of the fitted model over the measured steps whose largest fitted term is `term`
// ("gemm compute", "gemm memory", "attention", "overhead"): where the model is wrong.
struct TermError {
  std::string_view term;
  std::size_t points = 0;
  double mape = 0;  // mean |fitted - measured| / measured, a fraction; 0 without points
};

struct LatencyFit {
  device::LatencyCoefficients coefficients;  // fitted = true
  double mape = 0;                           // over every measured step, a fraction
  std::array<TermError, 4> by_term;          // in the order above
  std::vector<std::string_view> kept;        // coefficients no step determines (profile key names)
  int iterations = 0;                        // side assignments tried
  std::vector<double> point_errors;          // |fitted - measured| / measured of each point, in order
  std::array<TermError, 3> by_kind{};        // fit_kernels: "gemm", "attention", "stream"
};

// Throws InputError for no steps, an empty batch, a time that is not positive and finite, and
// fewer steps than coefficients they determine (the message names the step's index).
LatencyFit fit_latency(const StepLatencyModel& model, std::span<const MeasuredStep> steps,
                       const device::LatencyCoefficients& start);

// One kernel the calibration program timed (kernels/, measurements.hpp): its FLOPs, the bytes it
// moves to and from HBM, for a GEMM the rows M each weight element multiplies, and its time.
// The same rooflines as a step's kernels, with the profile's peaks:
//   gemm       floor + max((FLOPs/peak)(1 + half/M) / peak_eff, bytes / (bandwidth · memory_eff))
//   attention  floor + max(FLOPs / (peak · attention_eff), bytes / (bandwidth · memory_eff),
//                          context · attention_token_s)
//   stream     floor + bytes / (bandwidth · memory_eff)                 (copy, triad)
// (floor = kernel_floor_s: the shortest time of any kernel as timed; the serial side: one
// sequence's KV scanned in order, which no parallelism shortens; docs/calibration.md says why
// both.) Kernels determine the efficiencies, gemm_half_efficiency_tokens, kernel_floor_s and
// attention_token_s; no kernel measures an engine step's overheads, so step_overhead_s and
// graph_overhead_s stay as they start (`kept`). Because which side of a roofline a kernel is on
// depends on the coefficients, the fit starts from the given coefficients and from a few more
// (fit.cpp kStarts: orders of magnitude of the attention and floor terms) and keeps the best.
// fit_latency (steps) starts from the given coefficients only, so a profile without a floor or a
// serial side keeps both at 0 and lists them in `kept`.
enum class KernelKind { gemm, attention, stream };

struct MeasuredKernel {
  KernelKind kind = KernelKind::gemm;
  double flops = 0;
  double bytes = 0;
  double rows = 0;  // gemm only
  Seconds seconds = 0;
  double context = 0;  // attention only: KV tokens of each sequence (0: unknown, no serial side)
};

StepTerms kernel_terms(const device::GpuProfile& profile, const MeasuredKernel& kernel,
                       const device::LatencyCoefficients& c);

// Throws InputError for no kernels, a time that is not positive and finite, a kernel without
// bytes (or FLOPs, or rows for a GEMM), and a profile without peaks.
LatencyFit fit_kernels(const device::GpuProfile& profile, std::span<const MeasuredKernel> kernels,
                       const device::LatencyCoefficients& start);

}  // namespace headroom::latency
