#pragma once
// Caching-allocator settings as PyTorch parses them from PYTORCH_CUDA_ALLOC_CONF /
// PYTORCH_HIP_ALLOC_CONF / PYTORCH_ALLOC_CONF (c10/core/AllocatorConfig.cpp,
// c10/cuda/CUDAAllocatorConfig.cpp; spec §0).
#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/units.hpp"

namespace headroom::alloc {

// Size constants (c10/cuda/CUDACachingAllocator.cpp; spec §0).
inline constexpr Bytes kMinBlockSize = 512;            // block granularity
inline constexpr Bytes kSmallSize = 1 * MiB;           // rounded size <= this -> small pool
inline constexpr Bytes kSmallBuffer = 2 * MiB;         // small-pool segment; small expandable page
inline constexpr Bytes kMinLargeAlloc = 10 * MiB;      // large requests below this get a 20 MiB segment
inline constexpr Bytes kLargeBuffer = 20 * MiB;        // default large_segment_size
inline constexpr Bytes kRoundLarge = 2 * MiB;          // segments >= 10 MiB round up to this
inline constexpr std::size_t kRoundUpPowerOfTwoIntervals = 16;  // 1 MiB .. 32 GiB buckets
inline constexpr Bytes kUnlimited = std::numeric_limits<Bytes>::max();

struct AllocatorConfig {
  Bytes max_split_size = kUnlimited;             // max_split_size_mb; unlimited by default
  Bytes max_non_split_rounding_size = 20 * MiB;  // max_non_split_rounding_mb (follows large_segment_size)
  Bytes large_segment_size = kLargeBuffer;       // large_segment_size_mb (2026 main only)
  std::array<std::size_t, kRoundUpPowerOfTwoIntervals> roundup_power2_divisions{};  // 0 = off
  double garbage_collection_threshold = 0.0;     // acts only with a memory fraction set
  bool expandable_segments = false;
  std::optional<double> per_process_memory_fraction;  // newest: per_process_memory_fraction:f
  bool release_lock_on_cudamalloc = false;       // no effect on sizes; kept to round-trip settings
  bool graph_capture_record_stream_reuse = false;
  std::string text;                              // the string this was parsed from

  bool max_split_limited() const { return max_split_size != kUnlimited; }
  bool rounds_to_divisions() const {
    for (std::size_t d : roundup_power2_divisions)
      if (d > 1) return true;
    return false;
  }
  // Divisions for a size: interval index floor(log2 n) - 20 clamped to [0, 15] (AllocatorConfig.cpp).
  std::size_t divisions_for(Bytes n) const;
};

// Parses a config string with PyTorch's syntax and error cases. `source` names where the string came
// from in error messages (e.g. "--alloc-conf" or "scenario.yaml: allocator"). Throws InputError.
// Like PyTorch's parseArgs, options not named are left at their defaults (spec §0: re-parsing resets
// max_split_size, roundup divisions and the GC threshold).
AllocatorConfig parse_alloc_conf(std::string_view text, std::string_view source = "PYTORCH_CUDA_ALLOC_CONF");

// The canonical string for a config (round-trips through parse_alloc_conf).
std::string to_string(const AllocatorConfig& config);

}  // namespace headroom::alloc
