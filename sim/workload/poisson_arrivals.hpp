#pragma once
// Poisson arrivals: independent exponential gaps with mean 1/rate (inter-arrival CV 1).
#include "sim/workload/arrival_process.hpp"

namespace headroom::workload {

class PoissonArrivals final : public ArrivalProcess {
 public:
  // Throws InputError unless rate > 0 (requests per second).
  explicit PoissonArrivals(double rate);
  double next(Rng& rng) override;

 private:
  double rate_;
  double t_ = 0;
  bool started_ = false;
};

}  // namespace headroom::workload
