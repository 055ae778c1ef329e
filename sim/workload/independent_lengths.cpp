#include "sim/workload/independent_lengths.hpp"

namespace headroom::workload {

IndependentLengths::IndependentLengths(std::unique_ptr<LengthDistribution> input,
                                       std::unique_ptr<LengthDistribution> output)
    : input_(std::move(input)), output_(std::move(output)) {}

bool IndependentLengths::sample(Rng& rng, Request& r) {
  r.input_tokens = input_->sample(rng);
  r.output_tokens = output_->sample(rng);
  r.prefix_hashes.clear();
  r.prefix_block_tokens = 0;
  return true;
}

}  // namespace headroom::workload
