#pragma once
// On/off bursts: Poisson arrivals at `rate` during "on" periods of on_s seconds, none during
// the "off" periods of off_s seconds that follow each; the cycle starts with an on period at 0.
// The mean rate is rate * on_s / (on_s + off_s). Built by running a Poisson process on the
// on-time clock and mapping it to wall time, so the exponential gaps stay memoryless across an
// off period.
#include "sim/workload/arrival_process.hpp"

namespace headroom::workload {

class OnOffArrivals final : public ArrivalProcess {
 public:
  // Throws InputError unless rate > 0, on_s > 0 and off_s >= 0.
  OnOffArrivals(double rate, double on_s, double off_s);
  double next(Rng& rng) override;

 private:
  double rate_, on_s_, off_s_;
  double on_clock_ = 0;  // seconds of on-time elapsed at the last arrival
  bool started_ = false;
};

}  // namespace headroom::workload
