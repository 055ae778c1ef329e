#include "sim/workload/uniform_length.hpp"

#include <string>

#include "sim/core/error.hpp"
#include "sim/workload/field_parse.hpp"

namespace headroom::workload {

void check_length_range(const char* what, Tokens min, Tokens max) {
  if (min < 1 || max < min || max > kMaxTokenCount)
    throw InputError(std::string(what) + " length: needs 1 <= min <= max <= " + std::to_string(kMaxTokenCount) +
                     ", got min " + std::to_string(min) + ", max " + std::to_string(max));
}

UniformLength::UniformLength(Tokens min, Tokens max) : min_(min), max_(max) { check_length_range("uniform", min, max); }

Tokens UniformLength::sample(Rng& rng) const {
  return static_cast<Tokens>(rng.uniform_int(static_cast<std::uint64_t>(min_), static_cast<std::uint64_t>(max_)));
}

}  // namespace headroom::workload
