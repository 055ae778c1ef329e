#include "sim/workload/on_off_arrivals.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::workload {

OnOffArrivals::OnOffArrivals(double rate, double on_s, double off_s) : rate_(rate), on_s_(on_s), off_s_(off_s) {
  if (!(rate > 0) || !std::isfinite(rate))
    throw InputError("on_off arrivals: rate must be a positive number of requests per second, got " + fmt::format("{}", rate));
  if (!(on_s > 0) || !std::isfinite(on_s))
    throw InputError("on_off arrivals: on_s must be a positive number of seconds, got " + fmt::format("{}", on_s));
  if (!(off_s >= 0) || !std::isfinite(off_s))
    throw InputError("on_off arrivals: off_s must be a non-negative number of seconds, got " + fmt::format("{}", off_s));
}

double OnOffArrivals::next(Rng& rng) {
  if (started_) on_clock_ += rng.exponential(rate_);
  started_ = true;
  const double cycles = std::floor(on_clock_ / on_s_);
  return cycles * (on_s_ + off_s_) + (on_clock_ - cycles * on_s_);
}

}  // namespace headroom::workload
