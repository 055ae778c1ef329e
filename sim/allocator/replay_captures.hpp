#pragma once
// The CUDA-graph captures of a recorded history, inferred for its replay.
//
// A snapshot marks no capture boundary (PyTorch 2.11 records no trace entry for
// beginAllocateToPool/endAllocateToPool), but its final segments name the private pool they belong
// to (`segment_pool_id`) and the stream that allocated them. An allocation that lands in such a
// segment after the segment's last segment_alloc was made while a capture into that pool was
// underway on that stream. A capture is a maximal run of such allocations (the frees between them
// included); it begins just before its first allocation and ends just after its last one.
// What a capture with no allocation did is invisible, and equally without effect on the allocator.
#include <cstddef>
#include <vector>

#include "sim/allocator/block_pool.hpp"
#include "sim/allocator/snapshot.hpp"

namespace headroom::alloc {

struct InferredCapture {
  std::size_t first_event = 0;  // trace index of the capture's first allocation
  std::size_t last_event = 0;   // ... and of its last
  PoolId pool{0, 0};
  StreamId stream = 0;
  std::size_t allocations = 0;
};

// In trace order. `segments` are the snapshot's final segments of the replayed device.
std::vector<InferredCapture> infer_captures(const std::vector<SnapshotSegment>& segments,
                                            const std::vector<TraceEvent>& trace);

}  // namespace headroom::alloc
