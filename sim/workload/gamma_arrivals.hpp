#pragma once
// Gamma-renewal arrivals: independent Gamma gaps with mean 1/rate and a chosen coefficient of
// variation. CV 1 is Poisson; CV > 1 is bursty (clusters of short gaps between long ones, as
// in azure2023_code with CV 13); CV < 1 is more regular than Poisson. The shape is 1/CV^2 and
// the scale CV^2/rate.
#include "sim/workload/arrival_process.hpp"

namespace headroom::workload {

class GammaArrivals final : public ArrivalProcess {
 public:
  // Throws InputError unless rate > 0 and cv > 0.
  GammaArrivals(double rate, double cv);
  double next(Rng& rng) override;

 private:
  double shape_, scale_;
  double t_ = 0;
  bool started_ = false;
};

}  // namespace headroom::workload
