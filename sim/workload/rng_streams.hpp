#pragma once
// The Rng stream each random part of a workload draws from, for one seed. Separate streams keep
// parts independent: changing the length distribution does not move the arrival times, and
// thinning a trace does not depend on how lengths were drawn.
#include <cstdint>

namespace headroom::workload {

inline constexpr std::uint64_t kArrivalStream = 1;
inline constexpr std::uint64_t kLengthStream = 2;
inline constexpr std::uint64_t kThinningStream = 3;

}  // namespace headroom::workload
