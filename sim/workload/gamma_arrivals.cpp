#include "sim/workload/gamma_arrivals.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/workload/workload_limits.hpp"

namespace headroom::workload {

GammaArrivals::GammaArrivals(double rate, double cv) {
  if (!(rate > 0) || !std::isfinite(rate))
    throw InputError("gamma arrivals: rate must be a positive number of requests per second, got " + fmt::format("{}", rate));
  if (!(cv > 0) || !std::isfinite(cv))
    throw InputError("gamma arrivals: cv must be a positive number, got " + fmt::format("{}", cv));
  if (cv > limits::kMaxCv)  // cv² must stay finite
    throw InputError(fmt::format("gamma arrivals: cv must be at most {} (docs/limits.md), got {}", limits::kMaxCv, cv));
  shape_ = 1.0 / (cv * cv);
  scale_ = cv * cv / rate;
}

double GammaArrivals::next(Rng& rng) {
  if (started_) t_ += rng.gamma(shape_, scale_);
  started_ = true;
  return t_;
}

}  // namespace headroom::workload
