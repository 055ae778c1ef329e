#pragma once
// A closed run: operations after which the allocator's memory map is as it was before them (every
// block the run allocated was freed, none from before was, and no segment was created or released).
// A serving step's program is mostly one (its activations die with the step); when the same program
// starts again from the same memory map, it does exactly the same again, so its effect is applied
// (CachingAllocator::repeat) instead of replaying it.
//
// Why the map repeats: in the plain configuration (no stream events, no max_split_size, no
// expandable segments, no capture) a freed block always merges with its free neighbours, so a
// segment's free blocks are the gaps between its allocated ones; same segments and same allocated
// blocks give the same memory map, pools and free sets, whatever was split and merged in between.
// What the map does not fix is a free block's requested_size, the request of its last allocation
// (PyTorch keeps it, and DeviceCachingAllocator::snapshot in c10/cuda/CUDACachingAllocator.cpp
// writes it for inactive blocks too): a free keeps the freed block's in the merged block, so a
// closed run leaves in the free blocks its frees made the values it wrote, and another closed run in
// between may have written others. Those writes are part of the run's effect and repeat() makes
// them again.
#include <cstdint>
#include <vector>

#include "sim/allocator/stats.hpp"
#include "sim/core/units.hpp"

namespace headroom::alloc {

// Equal ids mean equal memory maps. `operations` counts mallocs and frees; a closed run takes it
// back to its value at the run's start. Every other change of state (empty_cache, a configuration or
// capture change, an OOM, stream events, a stats reset...) starts a new epoch. Between runs the id
// never decreases and only a closed run takes it back: an id seen twice names the same map.
struct StateId {
  std::uint64_t epoch = 0;
  std::int64_t operations = 0;
  bool operator==(const StateId&) const = default;
};

// The allocator at the start of a run (CachingAllocator::begin_run).
struct RunMark {
  StateId state;
  PooledStats stats;  // the array statistics before the run, peaks included
  std::int64_t device_allocs = 0, device_frees = 0, retries = 0, ooms = 0, syncs = 0;
  bool plain = false;
};

// A free block a closed run's frees made, and the requested_size they left in it.
struct RequestedWrite {
  Address ptr = 0;
  Bytes size = 0;
  Bytes requested = 0;
  StreamId stream = 0;
  bool small = false;
};

// What a closed run did: to the statistics, per array statistic and pool, the frees it counted
// (`freed`) and the peaks it reached (`peak`, `all_peak`; `current` and `base` unused, the run having
// left them as they were); and to the free blocks, the requested sizes it wrote.
struct ClosedRun {
  PooledStats effect;
  std::int64_t operations = 0;  // mallocs + frees
  std::vector<RequestedWrite> writes;
};

}  // namespace headroom::alloc
