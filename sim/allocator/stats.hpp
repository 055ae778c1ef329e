#pragma once
// torch.cuda.memory_stats() with PyTorch's names and meanings (c10/core/CachingDeviceAllocator.h;
// spec §5). Each array stat exists for all / small_pool / large_pool with current, peak,
// allocated (sum of increases) and freed (sum of decreases).
#include <array>
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace headroom::alloc {

struct Stat {
  std::int64_t current = 0;
  std::int64_t peak = 0;
  std::int64_t allocated = 0;
  std::int64_t freed = 0;

  void increase(std::int64_t n) {
    current += n;
    allocated += n;
    if (current > peak) peak = current;
  }
  void decrease(std::int64_t n) {
    current -= n;
    freed += n;
  }
  void reset_peak() { peak = current; }
  void reset_accumulated() { allocated = freed = 0; }
};

enum StatType : int { kAll = 0, kSmallPool = 1, kLargePool = 2 };
using StatArray = std::array<Stat, 3>;

struct AllocatorStats {
  StatArray allocation, segment, active, inactive_split;
  StatArray allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, requested_bytes;
  std::int64_t num_alloc_retries = 0;
  std::int64_t num_ooms = 0;
  std::int64_t num_sync_all_streams = 0;
  std::int64_t num_device_alloc = 0;  // cudaMalloc calls + page maps
  std::int64_t num_device_free = 0;   // cudaFree calls + page unmaps
  Stat oversize_allocations, oversize_segments;
  std::int64_t max_split_size = -1;   // -1 = unlimited

  // Applies f(stat) to `all` and to the pool's own entry.
  template <class F>
  static void both(StatArray& a, bool small, F&& f) {
    f(a[kAll]);
    f(a[small ? kSmallPool : kLargePool]);
  }
  void reset_peak();
  void reset_accumulated();
};

// The flat key/value dict torch.cuda.memory_stats() returns, e.g. "allocated_bytes.all.current".
nlohmann::json to_memory_stats_json(const AllocatorStats& stats);

}  // namespace headroom::alloc
