// The debugging mode behind `headroom run --check`: with set_check_each_operation(true) the invariant
// checker runs at the end of every operation, so a broken statistic is caught by the very next call.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "sim/allocator/caching_allocator.hpp"

using namespace headroom;
using namespace headroom::alloc;

TEST_CASE("check each operation: a corrupted block is caught by the next malloc, and only in that mode") {
  for (bool checking : {false, true}) {
    device::Device dev(device::DeviceSpec{.name = "test", .total = 8 * GiB});
    CachingAllocator a(dev, parse_alloc_conf(""));
    a.set_check_each_operation(checking);
    Block* x = a.malloc(4096);
    Block* y = a.malloc(3 * MiB);
    a.free(y);
    REQUIRE(x != nullptr);
    // requested_bytes is recomputed from the live blocks' requested sizes: 4096 no longer adds up.
    x->requested_size = 1000;
    if (checking) {
      CHECK_THROWS_WITH(a.malloc(512), Catch::Contains("requested_bytes") && Catch::Contains("recomputes to"));
    } else {
      CHECK(a.malloc(512) != nullptr);
      CHECK_THROWS_AS(a.check_invariants(), std::logic_error);
    }
  }
}

TEST_CASE("check each operation: a long mixed sequence passes the checker after every call") {
  device::Device dev(device::DeviceSpec{.name = "test", .total = 2 * GiB});
  CachingAllocator a(dev, parse_alloc_conf("max_split_size_mb:64"));
  a.set_check_each_operation(true);
  std::vector<Block*> live;
  std::uint64_t s = 12345;
  auto next = [&] { return s = s * 6364136223846793005ull + 1442695040888963407ull; };
  std::int64_t ooms = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::uint64_t r = next() >> 33;
    if (r % 3 != 0 || live.empty()) {
      const Bytes size = 1 + static_cast<Bytes>((next() >> 20) % (r % 5 == 0 ? 300 * MiB : 2 * MiB));
      if (Block* b = a.malloc(size, static_cast<StreamId>(r % 2))) live.push_back(b);
      else ++ooms;
    } else {
      const std::size_t k = (next() >> 33) % live.size();
      a.free(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
    if (i % 997 == 0) a.empty_cache();
  }
  for (Block* b : live) a.free(b);
  a.empty_cache();
  CHECK(a.reserved_bytes() == 0);
  CHECK(ooms > 0);  // the 2 GiB device filled up: the OOM path ran under the checker too
}

TEST_CASE("two-phase free of a block used on another stream: free_completed returns it to the cache") {
  // Found by fuzz/fuzz_allocator_ops (fuzz/regressions/allocator_ops/free_requested_after_record_stream.bin):
  // record_stream, then free_requested, then a synchronize freed the block with its stream use still
  // listed, so the block went back to the free set looking in use.
  device::Device dev(device::DeviceSpec{.name = "test", .total = 1 * GiB});
  CachingAllocator a(dev, parse_alloc_conf(""));
  a.set_check_each_operation(true);
  for (bool by_synchronize : {false, true}) {
    Block* b = a.malloc(4096, 0);
    REQUIRE(b != nullptr);
    const Address ptr = b->ptr;
    a.record_stream(b, 1);
    a.free_requested(b);
    CHECK(a.allocated_bytes() == 0);
    if (by_synchronize) a.synchronize();
    else a.free_completed(b);
    // Free again: the next request of the size on stream 0 gets the same address from the cache.
    Block* again = a.malloc(4096, 0);
    REQUIRE(again != nullptr);
    CHECK(again->ptr == ptr);
    a.free(again);
  }
}

TEST_CASE("a graph pool whose expandable segment never mapped is released with nothing left behind") {
  // Found by fuzz/fuzz_allocator_ops (fuzz/regressions/allocator_ops/oom_in_capture_expandable_then_release.bin):
  // an OOM during capture left the pool's new expandable segment unmapped and uncounted, and freeing
  // the pool left that segment's block pointing into the erased pool.
  device::Device dev(device::DeviceSpec{.name = "test", .total = 100 * MiB});
  CachingAllocator a(dev, parse_alloc_conf("expandable_segments:True"));
  a.set_check_each_operation(true);
  const PoolId pool{1, 1};
  a.begin_allocate_to_pool(pool, 0);
  CHECK(a.malloc(200 * MiB, 0) == nullptr);
  a.end_allocate_to_pool(pool);
  a.release_pool(pool);
  a.empty_cache();
  CHECK(a.reserved_bytes() == 0);
  CHECK(a.segments().empty());
  Block* b = a.malloc(1 * MiB, 0);
  CHECK(b != nullptr);
  a.free(b);
}
