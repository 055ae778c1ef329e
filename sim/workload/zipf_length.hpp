#pragma once
// Zipf lengths on min..max: P(min + k - 1) proportional to k^-exponent, so short requests are
// the most common and a long tail reaches max (BurstGPT, arXiv:2401.17644, fits its request
// tokens with a Zipf distribution).
#include "sim/workload/length_distribution.hpp"

namespace headroom::workload {

class ZipfLength final : public LengthDistribution {
 public:
  // Throws InputError unless exponent > 0 and 1 <= min <= max <= kMaxTokenCount.
  ZipfLength(Tokens min, Tokens max, double exponent);
  Tokens sample(Rng& rng) const override;

 private:
  Tokens min_;
  ZipfSampler zipf_;
};

}  // namespace headroom::workload
