#include "sim/workload/zipf_length.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/workload/uniform_length.hpp"

namespace headroom::workload {

namespace {
ZipfSampler checked(Tokens min, Tokens max, double exponent) {
  if (!(exponent > 0) || !std::isfinite(exponent))
    throw InputError(fmt::format("zipf length: exponent must be a positive number, got {}", exponent));
  check_length_range("zipf", min, max);
  return ZipfSampler(static_cast<std::uint64_t>(max - min + 1), exponent);
}
}  // namespace

ZipfLength::ZipfLength(Tokens min, Tokens max, double exponent) : min_(min), zipf_(checked(min, max, exponent)) {}

Tokens ZipfLength::sample(Rng& rng) const { return min_ + static_cast<Tokens>(zipf_(rng)) - 1; }

}  // namespace headroom::workload
