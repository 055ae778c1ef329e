// The plain configuration's fast malloc/free (caching_allocator.cpp) against the general path: the
// same operations on two allocators, one plain and one kept on the general path by history
// recording (a ring of 0 entries, so nothing is kept), give the same block at every malloc and the
// same memory_stats, peaks included. Stats are read only now and then, so that the fast path's
// allocation peaks stay unfolded across runs of mallocs and frees in between. At each read the
// memory maps match too, block by block with the requested size a snapshot shows for cached blocks
// (the fast free merges into the cached neighbour's Block, the general path into the freed one).
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/core/rng.hpp"

using namespace headroom;
using namespace headroom::alloc;

namespace {
// Every block of the memory map: address, size, requested size, state.
std::vector<std::tuple<Address, Bytes, Bytes, BlockState>> fast_path_blocks(const CachingAllocator& a) {
  std::vector<std::tuple<Address, Bytes, Bytes, BlockState>> out;
  for (const SnapshotSegment& seg : a.segments())
    for (const SnapshotBlock& b : seg.blocks) out.emplace_back(b.address, b.size, b.requested_size, b.state);
  return out;
}
}  // namespace

TEST_CASE("fast path: plain malloc/free give the general path's blocks and memory_stats, peaks included") {
  device::Device fast_dev(device::DeviceSpec{.name = "fast", .total = 4 * GiB});
  device::Device general_dev(device::DeviceSpec{.name = "general", .total = 4 * GiB});
  CachingAllocator fast(fast_dev);
  CachingAllocator general(general_dev);
  general.record_history(true, 0);
  Rng rng(11);
  std::vector<std::pair<Block*, Block*>> live;
  long reads = 0;
  for (int op = 0; op < 20'000; ++op) {
    // Runs of mallocs and of frees, both pools, two streams.
    const bool do_free = !live.empty() && (live.size() > 64 || rng.uniform() < 0.45);
    if (do_free) {
      const std::size_t i = static_cast<std::size_t>(rng.uniform_int(0, live.size() - 1));
      auto [f, g] = live[i];
      live[i] = live.back();
      live.pop_back();
      fast.free(f);
      general.free(g);
    } else {
      const Bytes n = rng.uniform() < 0.4 ? rng.uniform_int(1, 1 * MiB) : rng.uniform_int(1 * MiB + 1, 24 * MiB);
      const StreamId stream = rng.uniform_int(0, 1);
      Block* f = fast.malloc(n, stream);
      Block* g = general.malloc(n, stream);
      REQUIRE(f != nullptr);
      REQUIRE(g != nullptr);
      REQUIRE(f->ptr == g->ptr);
      REQUIRE(f->size == g->size);
      live.emplace_back(f, g);
    }
    if (op % 997 == 0) {
      ++reads;
      REQUIRE(to_memory_stats_json(fast.stats()) == to_memory_stats_json(general.stats()));
      REQUIRE(fast_path_blocks(fast) == fast_path_blocks(general));
      fast.check_invariants();
      if (op % 4 == 0) {  // a peak reset between reads: peaks pending at the reset are folded first
        fast.reset_peak_stats();
        general.reset_peak_stats();
      }
    }
  }
  for (auto& [f, g] : live) {
    fast.free(f);
    general.free(g);
  }
  const AllocatorStats& s = fast.stats();
  CHECK(to_memory_stats_json(s) == to_memory_stats_json(general.stats()));
  CHECK(s.allocated_bytes[kAll].peak > 0);
  CHECK(s.inactive_split[kAll].peak > 0);  // splits and merges happened in both pools
  CHECK(s.allocation[kSmallPool].peak > 0);
  CHECK(s.allocation[kLargePool].peak > 0);
  CHECK(reads > 10);
  CHECK(fast_path_blocks(fast) == fast_path_blocks(general));
  fast.check_invariants();
  general.check_invariants();
}
