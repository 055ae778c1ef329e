#include "sim/workload/rate_scale.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/workload/rng_streams.hpp"

namespace headroom::workload {

RateScale::RateScale(std::unique_ptr<RequestSource> inner, double factor, std::uint64_t seed)
    : inner_(std::move(inner)), factor_(factor), rng_(seed, kThinningStream) {
  if (!(factor > 0) || !std::isfinite(factor))
    throw InputError(fmt::format("rate_scale: must be a positive number, got {}", factor));
}

bool RateScale::next(Request& r) {
  while (inner_->next(r)) {
    if (factor_ < 1.0) {
      if (!rng_.bernoulli(factor_)) {
        ++thinned_;
        continue;
      }
    } else {
      r.arrival_s /= factor_;
    }
    r.id = emitted_++;
    return true;
  }
  return false;
}

SourceStats RateScale::stats() const {
  SourceStats s = inner_->stats();
  s.thinned += thinned_;
  s.emitted = emitted_;
  return s;
}

}  // namespace headroom::workload
