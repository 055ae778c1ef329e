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

// One statistic kept per pool ([0] small, [1] large). Its `all` entry is derived from the two, except
// the peak, which is the maximum of their sum over time: one counter set updated per change instead of
// two (the allocator's hot path).
struct PooledStat {
  // One pool's counter. Its `allocated` (sum of increases) is derived, not kept:
  // allocated - freed = current - current_at_reset, so an increase touches current and peak only.
  struct Counter {
    std::int64_t current = 0;
    std::int64_t peak = 0;
    std::int64_t freed = 0;
    std::int64_t base = 0;  // current at the last reset_accumulated()
    std::int64_t allocated() const { return freed + current - base; }
    Stat stat() const { return Stat{current, peak, allocated(), freed}; }
  };
  Counter pool[2];
  std::int64_t all_peak = 0;

  void increase(bool small, std::int64_t n) {
    Counter& c = pool[small ? 0 : 1];
    c.current += n;
    if (c.current > c.peak) c.peak = c.current;
    std::int64_t all = pool[0].current + pool[1].current;
    if (all > all_peak) all_peak = all;
  }
  void decrease(bool small, std::int64_t n) {
    Counter& c = pool[small ? 0 : 1];
    c.current -= n;
    c.freed += n;
  }
  // An increase whose peaks are left for fold_peak(): for a counter that no operation lowers between
  // the raise and the fold, the peaks at the fold are those of every state in between.
  void raise(bool small, std::int64_t n) { pool[small ? 0 : 1].current += n; }
  void fold_peak() {
    for (Counter& c : pool)
      if (c.current > c.peak) c.peak = c.current;
    std::int64_t all = pool[0].current + pool[1].current;
    if (all > all_peak) all_peak = all;
  }
  StatArray view() const {
    StatArray a;
    a[kSmallPool] = pool[0].stat();
    a[kLargePool] = pool[1].stat();
    a[kAll] = Stat{pool[0].current + pool[1].current, all_peak, pool[0].allocated() + pool[1].allocated(),
                   pool[0].freed + pool[1].freed};
    return a;
  }
  void reset_peak() {
    for (Counter& c : pool) c.peak = c.current;
    all_peak = pool[0].current + pool[1].current;
  }
  void reset_accumulated() {
    for (Counter& c : pool) {
      c.freed = 0;
      c.base = c.current;
    }
  }
};

struct PooledStats {
  PooledStat allocation, segment, active, inactive_split;
  PooledStat allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, requested_bytes;
  static constexpr PooledStat PooledStats::* kMembers[] = {
      &PooledStats::allocation,      &PooledStats::segment,        &PooledStats::active,
      &PooledStats::inactive_split,  &PooledStats::allocated_bytes, &PooledStats::reserved_bytes,
      &PooledStats::active_bytes,    &PooledStats::inactive_split_bytes, &PooledStats::requested_bytes};
  template <class F>
  void for_each(F&& f) {
    for (PooledStat PooledStats::* s : kMembers) f(this->*s);
  }
  // Writes the array statistics into `out` (scalars untouched).
  void view_into(AllocatorStats& out) const;
};

// The flat key/value dict torch.cuda.memory_stats() returns, e.g. "allocated_bytes.all.current".
nlohmann::json to_memory_stats_json(const AllocatorStats& stats);

}  // namespace headroom::alloc
