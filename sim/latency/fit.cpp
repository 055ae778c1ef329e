#include "sim/latency/fit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::latency {

namespace {

// The linear coefficients (fit.hpp) and their physical lower bounds.
constexpr std::size_t kCoefficients = 8;
using Vector = std::array<double, kCoefficients>;
constexpr std::array<std::string_view, kCoefficients> kNames = {
    "gemm_peak_efficiency", "gemm_half_efficiency_tokens", "memory_efficiency", "attention_efficiency",
    "step_overhead_s",      "graph_overhead_s",            "kernel_floor_s",    "attention_token_s"};
constexpr Vector kLower = {1, 0, 1, 1, 0, 0, 0, 0};
constexpr int kMaxIterations = 50;

// Where the alternating fit starts besides the caller's coefficients: which side of the attention
// roofline a kernel lands on, and whether the floor and the serial side take part, depend on the
// start (from 0 a side is never chosen, so never fitted). These are orders of magnitude to search
// from, not results: the fit moves every determined coefficient from them.
struct Start {
  double attention_efficiency, kernel_floor_s, attention_token_s;
};
constexpr std::array<Start, 6> kStarts = {{{0.5, 1e-5, 1e-7},
                                           {0.05, 1e-5, 1e-7},
                                           {0.005, 1e-5, 1e-7},
                                           {0.005, 1e-5, 1e-6},
                                           {0.05, 0, 0},
                                           {0.005, 1e-6, 3e-7}}};

Vector features(const StepTerms& t) {
  return {t.gemm_compute, t.gemm_ramp, t.gemm_memory + t.attention_memory, t.attention_compute, t.eager, t.graph,
          t.kernels,      t.attention_serial};
}

Vector to_linear(const device::LatencyCoefficients& c) {
  return {1 / c.gemm_peak_efficiency, c.gemm_half_efficiency_tokens / c.gemm_peak_efficiency,
          1 / c.memory_efficiency,    1 / c.attention_efficiency,
          c.step_overhead_s,          c.graph_overhead_s,
          c.kernel_floor_s,           c.attention_token_s};
}

device::LatencyCoefficients from_linear(const Vector& x) {
  device::LatencyCoefficients c;
  c.fitted = true;
  c.gemm_peak_efficiency = 1 / x[0];
  c.gemm_half_efficiency_tokens = x[1] / x[0];
  c.memory_efficiency = 1 / x[2];
  c.attention_efficiency = 1 / x[3];
  c.step_overhead_s = x[4];
  c.graph_overhead_s = x[5];
  c.kernel_floor_s = x[6];
  c.attention_token_s = x[7];
  return c;
}

// Lawson & Hanson NNLS: min |A y - b| subject to y >= 0. Columns move from the active set (held
// at 0) to the passive set while the gradient A^T(b - Ay) has a positive entry; a passive
// least-squares solution with a non-positive entry is pulled back along the segment to the
// feasible region and the entries that reach 0 return to the active set.
Eigen::VectorXd nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const Eigen::Index n = a.cols();
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(static_cast<std::size_t>(n), false);
  const double tolerance = 1e-12 * std::max(1.0, (a.transpose() * b).cwiseAbs().maxCoeff());
  for (int outer = 0; outer < 10 * static_cast<int>(n) + 10; ++outer) {
    const Eigen::VectorXd gradient = a.transpose() * (b - a * x);
    Eigen::Index pick = -1;
    for (Eigen::Index j = 0; j < n; ++j)
      if (!passive[static_cast<std::size_t>(j)] && gradient[j] > tolerance && (pick < 0 || gradient[j] > gradient[pick]))
        pick = j;
    if (pick < 0) break;
    passive[static_cast<std::size_t>(pick)] = true;
    for (int inner = 0; inner < 10 * static_cast<int>(n) + 10; ++inner) {
      std::vector<Eigen::Index> cols;
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<std::size_t>(j)]) cols.push_back(j);
      Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
      for (std::size_t k = 0; k < cols.size(); ++k) sub.col(static_cast<Eigen::Index>(k)) = a.col(cols[k]);
      const Eigen::VectorXd solved = sub.completeOrthogonalDecomposition().solve(b);
      Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
      bool feasible = true;
      for (std::size_t k = 0; k < cols.size(); ++k) {
        z[cols[k]] = solved[static_cast<Eigen::Index>(k)];
        feasible = feasible && solved[static_cast<Eigen::Index>(k)] > 0;
      }
      if (feasible) {
        x = z;
        break;
      }
      // Step from x towards z until the first passive entry reaches 0; that one (and any other
      // at or below 0) returns to the active set.
      double alpha = 1;
      Eigen::Index blocking = -1;
      for (Eigen::Index j : cols)
        if (z[j] <= 0) {
          const double gap = x[j] - z[j];
          const double step = gap > 0 ? x[j] / gap : 0;
          if (blocking < 0 || step < alpha) {
            alpha = step;
            blocking = j;
          }
        }
      x += alpha * (z - x);
      for (Eigen::Index j : cols)
        if (j == blocking || x[j] <= 0) {
          x[j] = 0;
          passive[static_cast<std::size_t>(j)] = false;
        }
    }
  }
  return x;
}

// Coefficients with no column in the problem keep their starting values, bit for bit.
void keep_undetermined(device::LatencyCoefficients& c, const device::LatencyCoefficients& start,
                       const std::array<bool, kCoefficients>& determined) {
  if (!determined[0]) c.gemm_peak_efficiency = start.gemm_peak_efficiency;
  if (!determined[1]) c.gemm_half_efficiency_tokens = start.gemm_half_efficiency_tokens;
  if (!determined[2]) c.memory_efficiency = start.memory_efficiency;
  if (!determined[3]) c.attention_efficiency = start.attention_efficiency;
  if (!determined[4]) c.step_overhead_s = start.step_overhead_s;
  if (!determined[5]) c.graph_overhead_s = start.graph_overhead_s;
  if (!determined[6]) c.kernel_floor_s = start.kernel_floor_s;
  if (!determined[7]) c.attention_token_s = start.attention_token_s;
}

struct Problem {
  std::vector<Vector> rows;  // features of each step under the current sides
  bool operator==(const Problem&) const = default;
};

// What the fit sees of the measured points: each one's terms under candidate coefficients, and
// its measured time. Steps (fit_latency) and single kernels (fit_kernels) both reduce to this.
struct Points {
  std::span<const double> seconds;
  std::function<StepTerms(std::size_t, const device::LatencyCoefficients&)> terms;
  std::size_t size() const { return seconds.size(); }
};

Problem build(const Points& points, const device::LatencyCoefficients& c) {
  Problem p;
  p.rows.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) p.rows.push_back(features(points.terms(i, c)));
  return p;
}

// Σ ((fitted - measured) / measured)^2 with the full (roofline) model.
double relative_sse(const Points& points, const device::LatencyCoefficients& c) {
  double sum = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double e = (step_seconds(points.terms(i, c), c) - points.seconds[i]) / points.seconds[i];
    sum += e * e;
  }
  return sum;
}

// Solves the linear problem for fixed sides; coefficients with an all-zero column keep `start`.
Vector solve(const Problem& p, const Points& points, const Vector& start,
              std::array<bool, kCoefficients>& determined) {
  const auto n = static_cast<Eigen::Index>(points.size());
  Eigen::MatrixXd a(n, static_cast<Eigen::Index>(kCoefficients));
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double weight = 1 / points.seconds[static_cast<std::size_t>(i)];
    for (std::size_t j = 0; j < kCoefficients; ++j)
      a(i, static_cast<Eigen::Index>(j)) = p.rows[static_cast<std::size_t>(i)][j] * weight;
    b[i] = 1;  // measured · weight
  }
  Vector x = start;
  std::vector<Eigen::Index> free;
  for (std::size_t j = 0; j < kCoefficients; ++j) {
    const auto col = static_cast<Eigen::Index>(j);
    determined[j] = a.col(col).cwiseAbs().maxCoeff() > 0;
    if (determined[j]) {
      free.push_back(col);
      b -= a.col(col) * kLower[j];  // solve for x - lower >= 0
    }
  }
  if (free.empty()) return x;
  Eigen::MatrixXd sub(n, static_cast<Eigen::Index>(free.size()));
  Eigen::VectorXd scale(static_cast<Eigen::Index>(free.size()));
  for (std::size_t k = 0; k < free.size(); ++k) {
    const auto kk = static_cast<Eigen::Index>(k);
    scale[kk] = a.col(free[k]).norm();  // unit columns: the features differ by orders of magnitude
    sub.col(kk) = a.col(free[k]) / scale[kk];
  }
  const Eigen::VectorXd y = nnls(sub, b);
  for (std::size_t k = 0; k < free.size(); ++k) {
    const auto j = static_cast<std::size_t>(free[k]);
    x[j] = kLower[j] + y[static_cast<Eigen::Index>(k)] / scale[static_cast<Eigen::Index>(k)];
  }
  return x;
}

// One alternating fit from `start`; `what` names the points in errors ("steps", "kernels").
LatencyFit fit_from(const Points& points, const device::LatencyCoefficients& start, std::string_view what) {
  if (!(start.gemm_peak_efficiency > 0 && start.memory_efficiency > 0 && start.attention_efficiency > 0))
    throw InputError("latency fit: the starting efficiencies must be positive");

  const Vector start_x = to_linear(start);
  device::LatencyCoefficients current = start;
  device::LatencyCoefficients best;
  double best_error = std::numeric_limits<double>::infinity();
  std::array<bool, kCoefficients> determined{}, best_determined{};
  std::vector<Problem> seen;  // side assignments already solved
  LatencyFit fit;
  for (int iteration = 1; iteration <= kMaxIterations; ++iteration) {
    Problem problem = build(points, current);
    // The same sides as before: a fixed point, or a cycle between assignments (a kernel near its
    // ridge point flipping sides); the best solution so far stands.
    if (std::find(seen.begin(), seen.end(), problem) != seen.end()) break;
    if (iteration == 1) {
      std::size_t columns = 0;
      for (std::size_t j = 0; j < kCoefficients; ++j) {
        bool used = false;
        for (const Vector& row : problem.rows) used = used || row[j] != 0;
        columns += used ? 1 : 0;
      }
      if (points.size() < columns)
        throw InputError(fmt::format("latency fit: the measured {} depend on {} coefficients, which need at least "
                                     "{} {}, got {}",
                                     what, columns, columns, what, points.size()));
    }
    device::LatencyCoefficients candidate = from_linear(solve(problem, points, start_x, determined));
    keep_undetermined(candidate, start, determined);
    fit.iterations = iteration;
    const double error = relative_sse(points, candidate);
    if (error < best_error) {
      best_error = error;
      best = candidate;
      best_determined = determined;
    }
    current = candidate;
    seen.push_back(std::move(problem));
  }

  fit.coefficients = best;
  for (std::size_t j = 0; j < kCoefficients; ++j)
    if (!best_determined[j]) fit.kept.push_back(kNames[j]);
  return fit;
}

// Errors of `fit.coefficients`, overall and grouped by each point's largest fitted term.
void summarise(const Points& points, LatencyFit& fit) {
  fit.point_errors.clear();
  fit.by_term = {TermError{"gemm compute"}, TermError{"gemm memory"}, TermError{"attention"}, TermError{"overhead"}};
  const auto& c = fit.coefficients;
  double total = 0;
  fit.point_errors.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const StepTerms t = points.terms(i, c);
    const double error = std::abs(step_seconds(t, c) - points.seconds[i]) / points.seconds[i];
    fit.point_errors.push_back(error);
    total += error;
    const std::array<double, 4> parts = {
        (t.gemm_compute + t.gemm_ramp * c.gemm_half_efficiency_tokens) / c.gemm_peak_efficiency,
        t.gemm_memory / c.memory_efficiency,
        t.attention_compute / c.attention_efficiency + t.attention_memory / c.memory_efficiency +
            t.attention_serial * c.attention_token_s,
        t.eager * c.step_overhead_s + t.graph * c.graph_overhead_s + t.kernels * c.kernel_floor_s};
    std::size_t largest = 0;
    for (std::size_t k = 1; k < parts.size(); ++k)
      if (parts[k] > parts[largest]) largest = k;
    fit.by_term[largest].points += 1;
    fit.by_term[largest].mape += error;
  }
  fit.mape = total / static_cast<double>(points.size());
  for (TermError& e : fit.by_term)
    if (e.points > 0) e.mape /= static_cast<double>(e.points);
}

// The fit proper (fit.hpp): from the caller's start and, for kernels, from kStarts, the one of
// least relative squared error. Coefficients no point determines keep the caller's values. Steps
// fit from the caller's start only: an engine step's kernel count barely varies, so a floor per
// kernel would trade against step_overhead_s; they fit the floor and the serial side only where
// the profile already has them.
LatencyFit fit_points(const Points& points, const device::LatencyCoefficients& start, std::string_view what,
                      bool multi_start) {
  LatencyFit best = fit_from(points, start, what);
  double best_error = relative_sse(points, best.coefficients);
  for (const Start& s : kStarts) {
    if (!multi_start) break;
    device::LatencyCoefficients from = start;
    from.attention_efficiency = s.attention_efficiency;
    from.kernel_floor_s = s.kernel_floor_s;
    from.attention_token_s = s.attention_token_s;
    LatencyFit fit;
    try {
      fit = fit_from(points, from, what);
    } catch (const InputError&) {
      continue;  // from here more coefficients take part than there are points: not a candidate
    }
    // What this start set but no point determined goes back to the caller's value.
    for (std::string_view kept : fit.kept) {
      if (kept == "attention_efficiency") fit.coefficients.attention_efficiency = start.attention_efficiency;
      if (kept == "kernel_floor_s") fit.coefficients.kernel_floor_s = start.kernel_floor_s;
      if (kept == "attention_token_s") fit.coefficients.attention_token_s = start.attention_token_s;
    }
    // Another start wins only by a margin: where the caller's start already fits (a known-answer
    // test), rounding must not trade one coefficient for a collinear one.
    const double error = relative_sse(points, fit.coefficients);
    if (error < 0.999 * best_error && best_error - error > 1e-12 * static_cast<double>(points.size())) {
      best_error = error;
      best = std::move(fit);
    }
  }
  summarise(points, best);
  return best;
}

void check_seconds(double s, std::string_view what, std::size_t i) {
  if (!(s > 0) || !std::isfinite(s))
    throw InputError(fmt::format("latency fit: {} {}: expected a positive time in seconds, got {}", what, i, s));
}

}  // namespace

LatencyFit fit_latency(const StepLatencyModel& model, std::span<const MeasuredStep> steps,
                       const device::LatencyCoefficients& start) {
  if (steps.empty()) throw InputError("latency fit: no measured steps");
  std::vector<double> seconds;
  seconds.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].batch.empty()) throw InputError(fmt::format("latency fit: measured step {}: the batch is empty", i));
    check_seconds(steps[i].seconds, "measured step", i);
    seconds.push_back(steps[i].seconds);
  }
  Points points{seconds, [&](std::size_t i, const device::LatencyCoefficients& c) { return model.terms(steps[i].batch, c); }};
  return fit_points(points, start, "steps", false);
}

StepTerms kernel_terms(const device::GpuProfile& profile, const MeasuredKernel& k, const device::LatencyCoefficients& c) {
  StepTerms t;
  const double compute = k.flops / profile.dense_bf16_flops_per_s;  // the calibrator measures bf16
  const double memory = k.bytes / profile.bandwidth_bytes_per_s;
  switch (k.kind) {
    case KernelKind::gemm: add_gemm_terms(t, compute, k.rows, memory, c); break;
    case KernelKind::attention: add_attention_terms(t, compute, memory, k.context, c); break;
    case KernelKind::stream: t.gemm_memory += memory; break;  // a pure read/write stream
  }
  t.kernels = 1;  // each measured kernel was launched, and timed, on its own
  return t;
}

LatencyFit fit_kernels(const device::GpuProfile& profile, std::span<const MeasuredKernel> kernels,
                       const device::LatencyCoefficients& start) {
  if (kernels.empty()) throw InputError("latency fit: no measured kernels");
  if (!(profile.bandwidth_bytes_per_s > 0) || !(profile.dense_bf16_flops_per_s > 0))
    throw InputError(fmt::format("GPU profile '{}': bandwidth and bf16 peak must be positive", profile.name));
  std::vector<double> seconds;
  seconds.reserve(kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const MeasuredKernel& k = kernels[i];
    check_seconds(k.seconds, "measured kernel", i);
    const bool gemm = k.kind == KernelKind::gemm;
    if (!(k.bytes > 0) || (k.kind != KernelKind::stream && !(k.flops > 0)) || (gemm && !(k.rows >= 1)))
      throw InputError(fmt::format("latency fit: measured kernel {}: expected positive bytes{}{}", i,
                                   k.kind != KernelKind::stream ? " and FLOPs" : "", gemm ? " and rows >= 1" : ""));
    seconds.push_back(k.seconds);
  }
  Points points{seconds, [&](std::size_t i, const device::LatencyCoefficients& c) {
                  return kernel_terms(profile, kernels[i], c);
                }};
  LatencyFit fit = fit_points(points, start, "kernels", true);
  fit.by_kind = {TermError{"gemm"}, TermError{"attention"}, TermError{"stream"}};
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    TermError& e = fit.by_kind[static_cast<std::size_t>(kernels[i].kind)];
    e.points += 1;
    e.mape += fit.point_errors[i];
  }
  for (TermError& e : fit.by_kind)
    if (e.points > 0) e.mape /= static_cast<double>(e.points);
  return fit;
}

}  // namespace headroom::latency
