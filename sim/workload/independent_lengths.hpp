#pragma once
// Input and output lengths drawn independently from two distributions (input first, then
// output, from the same stream). No prefix hashes.
#include <memory>

#include "sim/workload/length_distribution.hpp"
#include "sim/workload/length_model.hpp"

namespace headroom::workload {

class IndependentLengths final : public LengthModel {
 public:
  IndependentLengths(std::unique_ptr<LengthDistribution> input, std::unique_ptr<LengthDistribution> output);
  bool sample(Rng& rng, Request& r) override;

 private:
  std::unique_ptr<LengthDistribution> input_, output_;
};

}  // namespace headroom::workload
