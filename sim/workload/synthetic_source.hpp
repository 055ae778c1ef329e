#pragma once
// A synthetic workload: arrival times from an arrival process, lengths from a length model,
// each from its own Rng stream of one seed. It ends after `requests` requests, at the first
// arrival at or after `duration_s`, or when the length model runs out, whichever comes first.
#include <cstdint>
#include <memory>
#include <optional>

#include "sim/workload/arrival_process.hpp"
#include "sim/workload/length_model.hpp"
#include "sim/workload/request_source.hpp"

namespace headroom::workload {

struct SyntheticLimits {
  std::optional<std::uint64_t> requests;
  std::optional<double> duration_s;
};

class SyntheticSource final : public RequestSource {
 public:
  // Throws InputError when nothing would end it (no limit and an endless length model), or
  // when duration_s is not positive.
  SyntheticSource(std::unique_ptr<ArrivalProcess> arrivals, std::unique_ptr<LengthModel> lengths,
                  SyntheticLimits limits, std::uint64_t seed);
  bool next(Request& r) override;
  SourceStats stats() const override;

 private:
  std::unique_ptr<ArrivalProcess> arrivals_;
  std::unique_ptr<LengthModel> lengths_;
  SyntheticLimits limits_;
  Rng arrival_rng_, length_rng_;
  std::uint64_t emitted_ = 0;
  bool ended_ = false;
};

}  // namespace headroom::workload
