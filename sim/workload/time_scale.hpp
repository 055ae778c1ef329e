#pragma once
// Multiplies every arrival time by `factor`: 2 stretches the trace to twice its length (half the
// rate), 0.5 plays it twice as fast. Lengths and order are unchanged.
#include <cstdint>
#include <memory>

#include "sim/workload/request_source.hpp"

namespace headroom::workload {

class TimeScale final : public RequestSource {
 public:
  // Throws InputError unless factor > 0.
  TimeScale(std::unique_ptr<RequestSource> inner, double factor);
  bool next(Request& r) override;
  SourceStats stats() const override { return inner_->stats(); }

 private:
  std::unique_ptr<RequestSource> inner_;
  double factor_;
};

}  // namespace headroom::workload
