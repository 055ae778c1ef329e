#include "sim/workload/burst.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::workload {

Burst::Burst(std::unique_ptr<RequestSource> inner, double at_s, double duration_s, int factor)
    : inner_(std::move(inner)), at_s_(at_s), end_s_(at_s + duration_s), factor_(factor) {
  if (!(at_s >= 0) || !std::isfinite(at_s)) throw InputError(fmt::format("burst.at_s: must be at least 0, got {}", at_s));
  if (!(duration_s > 0) || !std::isfinite(duration_s))
    throw InputError(fmt::format("burst.duration_s: must be a positive number, got {}", duration_s));
  if (factor < 2) throw InputError(fmt::format("burst.factor: must be at least 2, got {}", factor));
}

bool Burst::next(Request& r) {
  if (copies_left_ > 0) {
    --copies_left_;
    r = pending_;
    r.id = emitted_++;
    return true;
  }
  if (!inner_->next(r)) return false;
  if (r.arrival_s >= at_s_ && r.arrival_s < end_s_) {
    pending_ = r;
    pending_.prefix_hashes.clear();
    pending_.prefix_block_tokens = 0;
    copies_left_ = factor_ - 1;
  }
  r.id = emitted_++;
  return true;
}

SourceStats Burst::stats() const {
  SourceStats s = inner_->stats();
  s.emitted = emitted_;
  return s;
}

}  // namespace headroom::workload
