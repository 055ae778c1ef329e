#pragma once
// A synthetic arrival process: the times at which requests arrive.
#include "sim/core/rng.hpp"

namespace headroom::workload {

class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  // The next arrival time in seconds. The first is 0 (like a trace rebased to its first row);
  // the times never decrease.
  virtual double next(Rng& rng) = 0;
};

}  // namespace headroom::workload
