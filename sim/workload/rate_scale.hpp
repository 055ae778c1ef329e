#pragma once
// Scales the request rate by `factor`:
//  - below 1, by thinning: each request is kept with probability `factor` (its own Rng stream of
//    the seed), so the trace keeps its length, its time structure and its bursts, at a lower rate;
//  - above 1, by compressing time: every arrival is divided by `factor`, so all requests arrive
//    `factor` times faster and the trace is `factor` times shorter (a trace cannot be thickened
//    without inventing requests).
// Ids are renumbered from 0.
#include <cstdint>
#include <memory>

#include "sim/core/rng.hpp"
#include "sim/workload/request_source.hpp"

namespace headroom::workload {

class RateScale final : public RequestSource {
 public:
  // Throws InputError unless factor > 0.
  RateScale(std::unique_ptr<RequestSource> inner, double factor, std::uint64_t seed);
  bool next(Request& r) override;
  SourceStats stats() const override;

 private:
  std::unique_ptr<RequestSource> inner_;
  double factor_;
  Rng rng_;
  std::uint64_t thinned_ = 0, emitted_ = 0;
};

}  // namespace headroom::workload
