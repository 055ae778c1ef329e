#include "sim/workload/time_scale.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::workload {

TimeScale::TimeScale(std::unique_ptr<RequestSource> inner, double factor) : inner_(std::move(inner)), factor_(factor) {
  if (!(factor > 0) || !std::isfinite(factor))
    throw InputError(fmt::format("time_scale: must be a positive number, got {}", factor));
}

bool TimeScale::next(Request& r) {
  if (!inner_->next(r)) return false;
  r.arrival_s *= factor_;
  return true;
}

}  // namespace headroom::workload
