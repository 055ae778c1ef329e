#pragma once
// The sizing rules of the caching allocator (spec §1): request rounding, pool choice, segment size.
#include <bit>

#include "sim/allocator/alloc_config.hpp"

namespace headroom::alloc {

// round_size(n): 512-byte minimum and granularity, or power-of-two divisions when configured.
inline Bytes round_size(Bytes n, const AllocatorConfig& c, bool divisions_configured) {
  if (n < kMinBlockSize) return kMinBlockSize;
  if (!divisions_configured) return round_up(n, kMinBlockSize);
  std::size_t divisions = c.divisions_for(n);
  if (divisions > 1 && n > kMinBlockSize * divisions) {
    // Round up to the next 1/divisions step of the enclosing power-of-two interval
    // (roundup_power2_next_division in CUDACachingAllocator.cpp).
    if (std::has_single_bit(n)) return n;
    Bytes floor2 = std::bit_floor(n);
    Bytes step = floor2 / divisions;
    if (step == 0) return floor2 << 1;
    return round_up(n, step);
  }
  return round_up(n, kMinBlockSize);
}

inline bool is_small_request(Bytes rounded) { return rounded <= kSmallSize; }

inline Bytes round_size(Bytes n, const AllocatorConfig& c) { return round_size(n, c, c.rounds_to_divisions()); }

// get_allocation_size: the size of a new segment for a rounded request.
inline Bytes segment_size_for(Bytes rounded, const AllocatorConfig& c) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return c.large_segment_size;
  return round_up(rounded, kRoundLarge);
}

}  // namespace headroom::alloc
