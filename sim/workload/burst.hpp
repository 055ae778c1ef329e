#pragma once
// Injects a burst: every request arriving in [at_s, at_s + duration_s) comes `factor` times, the
// copies at the same instant as the original (a stress variant for `headroom tune`). Copies are
// other users: they carry no prefix hashes, so a prefix cache does not absorb them.
#include <cstdint>
#include <memory>

#include "sim/workload/request_source.hpp"

namespace headroom::workload {

class Burst final : public RequestSource {
 public:
  // Throws InputError unless duration_s > 0, at_s >= 0 and factor >= 2.
  Burst(std::unique_ptr<RequestSource> inner, double at_s, double duration_s, int factor);
  bool next(Request& r) override;
  SourceStats stats() const override;

 private:
  std::unique_ptr<RequestSource> inner_;
  double at_s_, end_s_;
  int factor_;
  Request pending_;        // the original being copied
  int copies_left_ = 0;
  std::uint64_t emitted_ = 0;
};

}  // namespace headroom::workload
