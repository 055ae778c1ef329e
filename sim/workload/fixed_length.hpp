#pragma once
// Every request has the same length.
#include "sim/workload/length_distribution.hpp"

namespace headroom::workload {

class FixedLength final : public LengthDistribution {
 public:
  // Throws InputError unless 1 <= value <= kMaxTokenCount.
  explicit FixedLength(Tokens value);
  Tokens sample(Rng&) const override { return value_; }

 private:
  Tokens value_;
};

}  // namespace headroom::workload
