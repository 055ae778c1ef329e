#pragma once
// Limits on a workload (docs/limits.md says why each is where it is). The size caps (requests,
// duration) stop a workload that would run for days and write terabytes; a scenario lifts them
// with `workload.allow_large: true`. The others are hard: beyond them the arithmetic stops
// meaning anything.
#include <cstdint>

#include "sim/workload/field_parse.hpp"

namespace headroom::workload::limits {

// Requests one workload hands out: requests.csv takes ~100 bytes a request, so 10 million is
// ~1 GB and an hour or more of simulation. The largest public trace (Azure 2024, a week) has
// ~17 million rows; a run over all of it needs allow_large.
inline constexpr std::uint64_t kMaxRequests = 10'000'000;
// Simulated seconds of arrivals: 30 days, four times the longest public trace.
inline constexpr double kMaxDurationS = 30.0 * 24 * 3600;

// Arrival times, whatever allow_large says: at 10^9 s (31.7 years) a double still resolves
// 0.12 µs, finer than any step; beyond it steps would stop moving the clock, and then inf.
inline constexpr double kMaxArrivalS = 1e9;
// Arrival rates (requests per second, and the rate and time scale factors): 10^-6 is one request in
// 11.6 days, 10^6 a thousand times the busiest trace; beyond them times leave the range above.
inline constexpr double kMinRate = 1e-6;
inline constexpr double kMaxRate = 1e6;
// Coefficients of variation (gamma arrivals, lognormal lengths): cv² must stay finite for the
// distributions' parameters; real traces show cv up to ~10.
inline constexpr double kMaxCv = 1000;

}  // namespace headroom::workload::limits
