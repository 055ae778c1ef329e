#include "sim/workload/poisson_arrivals.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::workload {

PoissonArrivals::PoissonArrivals(double rate) : rate_(rate) {
  if (!(rate > 0) || !std::isfinite(rate))
    throw InputError("poisson arrivals: rate must be a positive number of requests per second, got " + fmt::format("{}", rate));
}

double PoissonArrivals::next(Rng& rng) {
  if (started_) t_ += rng.exponential(rate_);
  started_ = true;
  return t_;
}

}  // namespace headroom::workload
