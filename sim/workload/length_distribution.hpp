#pragma once
// A synthetic distribution of token counts (for prompts or outputs).
#include "sim/core/rng.hpp"
#include "sim/workload/request.hpp"

namespace headroom::workload {

class LengthDistribution {
 public:
  virtual ~LengthDistribution() = default;
  // One token count, at least 1.
  virtual Tokens sample(Rng& rng) const = 0;
};

}  // namespace headroom::workload
