#include "sim/workload/time_window.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::workload {

TimeWindow::TimeWindow(std::unique_ptr<RequestSource> inner, double start_s, std::optional<double> end_s)
    : inner_(std::move(inner)), start_s_(start_s), end_s_(end_s) {
  if (!(start_s >= 0) || !std::isfinite(start_s))
    throw InputError(fmt::format("window: start_s must be a non-negative number of seconds, got {}", start_s));
  if (end_s && !(*end_s > start_s))
    throw InputError(fmt::format("window: end_s must be after start_s ({}), got {}", start_s, *end_s));
}

bool TimeWindow::next(Request& r) {
  while (!ended_ && inner_->next(r)) {
    if (r.arrival_s < start_s_) {
      ++before_;
      continue;
    }
    if (end_s_ && r.arrival_s >= *end_s_) break;
    r.arrival_s -= start_s_;
    r.id = emitted_++;
    return true;
  }
  ended_ = true;
  return false;
}

SourceStats TimeWindow::stats() const {
  SourceStats s = inner_->stats();
  s.outside_window += before_;
  s.emitted = emitted_;
  return s;
}

}  // namespace headroom::workload
