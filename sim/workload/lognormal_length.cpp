#include "sim/workload/lognormal_length.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/workload/workload_limits.hpp"
#include "sim/workload/uniform_length.hpp"

namespace headroom::workload {

LognormalLength::LognormalLength(double mean, double cv, Tokens min, Tokens max) : min_(min), max_(max) {
  if (!(mean > 0) || !std::isfinite(mean))
    throw InputError(fmt::format("lognormal length: mean must be a positive number of tokens, got {}", mean));
  if (!(cv > 0) || !std::isfinite(cv))
    throw InputError(fmt::format("lognormal length: cv must be a positive number, got {}", cv));
  if (cv > limits::kMaxCv)  // cv² must stay finite
    throw InputError(fmt::format("lognormal length: cv must be at most {} (docs/limits.md), got {}", limits::kMaxCv, cv));
  check_length_range("lognormal", min, max);
  // sqrt is exactly rounded everywhere; log is the portable one, so the parameters are too.
  const double s2 = portable_log1p(cv * cv);
  sigma_ = std::sqrt(s2);
  mu_ = portable_log(mean) - s2 / 2;
}

Tokens LognormalLength::sample(Rng& rng) const {
  const double x = std::floor(rng.lognormal(mu_, sigma_) + 0.5);
  if (!(x > static_cast<double>(min_))) return min_;  // NaN too: never a cast of one
  if (x >= static_cast<double>(max_)) return max_;
  return static_cast<Tokens>(x);
}

}  // namespace headroom::workload
