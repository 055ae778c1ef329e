#include "sim/workload/synthetic_source.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/workload/rng_streams.hpp"

namespace headroom::workload {

SyntheticSource::SyntheticSource(std::unique_ptr<ArrivalProcess> arrivals, std::unique_ptr<LengthModel> lengths,
                                 SyntheticLimits limits, std::uint64_t seed)
    : arrivals_(std::move(arrivals)),
      lengths_(std::move(lengths)),
      limits_(limits),
      arrival_rng_(seed, kArrivalStream),
      length_rng_(seed, kLengthStream) {
  if (limits_.duration_s && (!(*limits_.duration_s > 0) || !std::isfinite(*limits_.duration_s)))
    throw InputError(fmt::format("synthetic workload: duration_s must be a positive number of seconds, got {}",
                                 *limits_.duration_s));
  if (!limits_.requests && !limits_.duration_s && !lengths_->finite())
    throw InputError("synthetic workload: give requests or duration_s (or lengths from a file in sequential "
                     "order), otherwise it never ends");
}

bool SyntheticSource::next(Request& r) {
  if (ended_ || (limits_.requests && emitted_ >= *limits_.requests)) return false;
  const double t = arrivals_->next(arrival_rng_);
  if ((limits_.duration_s && t >= *limits_.duration_s) || !lengths_->sample(length_rng_, r)) {
    ended_ = true;
    return false;
  }
  r.id = emitted_++;
  r.arrival_s = t;
  return true;
}

SourceStats SyntheticSource::stats() const {
  SourceStats s = lengths_->stats();
  s.emitted = emitted_;
  return s;
}

}  // namespace headroom::workload
