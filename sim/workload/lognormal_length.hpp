#pragma once
// Lognormal lengths given by their mean and coefficient of variation (the moments a trace's
// summary shows): sigma^2 = ln(1 + cv^2), mu = ln(mean) - sigma^2 / 2. Each draw is rounded to
// the nearest integer and clamped to [min, max], which moves the moments a little when the
// bounds cut into the distribution.
#include "sim/workload/length_distribution.hpp"

namespace headroom::workload {

class LognormalLength final : public LengthDistribution {
 public:
  // Throws InputError unless mean > 0, cv > 0 and 1 <= min <= max <= kMaxTokenCount.
  LognormalLength(double mean, double cv, Tokens min, Tokens max);
  Tokens sample(Rng& rng) const override;

 private:
  double mu_, sigma_;
  Tokens min_, max_;
};

}  // namespace headroom::workload
