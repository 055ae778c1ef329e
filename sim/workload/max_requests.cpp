#include "sim/workload/max_requests.hpp"

namespace headroom::workload {

MaxRequests::MaxRequests(std::unique_ptr<RequestSource> inner, std::uint64_t limit)
    : inner_(std::move(inner)), limit_(limit) {}

bool MaxRequests::next(Request& r) {
  if (emitted_ >= limit_ || !inner_->next(r)) return false;
  ++emitted_;
  return true;
}

SourceStats MaxRequests::stats() const {
  SourceStats s = inner_->stats();
  s.emitted = emitted_;
  return s;
}

}  // namespace headroom::workload
