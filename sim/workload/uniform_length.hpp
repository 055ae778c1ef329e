#pragma once
// Lengths uniform on the integers min..max, both included.
#include "sim/workload/length_distribution.hpp"

namespace headroom::workload {

class UniformLength final : public LengthDistribution {
 public:
  // Throws InputError unless 1 <= min <= max <= kMaxTokenCount.
  UniformLength(Tokens min, Tokens max);
  Tokens sample(Rng& rng) const override;

 private:
  Tokens min_, max_;
};

// Shared check of a [min, max] token range; `what` names the distribution in the message.
void check_length_range(const char* what, Tokens min, Tokens max);

}  // namespace headroom::workload
