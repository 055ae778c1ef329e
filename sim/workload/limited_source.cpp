#include "sim/workload/limited_source.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/workload/workload_limits.hpp"

namespace headroom::workload {

LimitedSource::LimitedSource(std::unique_ptr<RequestSource> inner, std::string what, bool allow_large,
                             std::string allow_large_how)
    : inner_(std::move(inner)),
      what_(std::move(what)),
      allow_large_how_(std::move(allow_large_how)),
      max_requests_(allow_large ? std::numeric_limits<std::uint64_t>::max() : limits::kMaxRequests),
      max_arrival_s_(allow_large ? limits::kMaxArrivalS : limits::kMaxDurationS) {}

bool LimitedSource::next(Request& r) {
  if (!inner_->next(r)) return false;
  // One compare each; `!(x <= max)` also catches NaN.
  if (++emitted_ > max_requests_ || !(r.arrival_s <= max_arrival_s_) || !(r.arrival_s >= 0)) [[unlikely]]
    refuse(r);
  return true;
}

void LimitedSource::refuse(const Request& r) const {
  if (emitted_ > max_requests_)
    throw InputError(fmt::format("{}: more than {} requests, above the limit for one workload (docs/limits.md); {} "
                                 "to run it anyway, or cap it with transforms.max_requests",
                                 what_, max_requests_, allow_large_how_));
  if (!std::isfinite(r.arrival_s) || r.arrival_s < 0)
    throw InputError(fmt::format("{}: request {} arrives at {} s, not a finite time (check the arrival rate and the "
                                 "time transforms)",
                                 what_, r.id, r.arrival_s));
  if (max_arrival_s_ < limits::kMaxArrivalS)
    throw InputError(fmt::format("{}: request {} arrives at {} s, after the limit of {} s (30 days) of arrivals "
                                 "(docs/limits.md); {} to run it anyway, or cut it with transforms.window",
                                 what_, r.id, r.arrival_s, limits::kMaxDurationS, allow_large_how_));
  throw InputError(fmt::format("{}: request {} arrives at {} s, after the limit of {} s for any arrival "
                               "(docs/limits.md; check the arrival rate and the time transforms)",
                               what_, r.id, r.arrival_s, limits::kMaxArrivalS));
}

}  // namespace headroom::workload
