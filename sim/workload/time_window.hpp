#pragma once
// Keeps the requests arriving in [start_s, end_s) of the source's clock and moves them so that
// start_s becomes 0. Reading stops at the first arrival at or after end_s (the rest of the
// source is not read, so SourceStats::outside_window counts only the requests before start_s).
// Ids are renumbered from 0.
#include <memory>
#include <optional>

#include "sim/workload/request_source.hpp"

namespace headroom::workload {

class TimeWindow final : public RequestSource {
 public:
  // Throws InputError unless 0 <= start_s < end_s (end_s empty: to the end).
  TimeWindow(std::unique_ptr<RequestSource> inner, double start_s, std::optional<double> end_s);
  bool next(Request& r) override;
  SourceStats stats() const override;

 private:
  std::unique_ptr<RequestSource> inner_;
  double start_s_;
  std::optional<double> end_s_;
  std::uint64_t before_ = 0, emitted_ = 0;
  bool ended_ = false;
};

}  // namespace headroom::workload
