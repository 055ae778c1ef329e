// The device's virtual addresses: the simulations' lowest-first order, and the CUDA driver's as the
// H100 recordings of ../shared/gpu show it (docs/replay-and-allocator.md, "The driver's addresses"):
// fresh address space is taken downwards, a freed range is reused from its start, lowest first.
#include <catch2/catch.hpp>

#include "sim/device/device.hpp"

using namespace headroom;
using namespace headroom::device;

TEST_CASE("device addresses: lowest first, upwards, freed ranges reused from their start") {
  Device d(DeviceSpec{.name = "sim", .total = 80 * GiB, .base_address = 0x7f0000000000ull});
  const Address a = *d.cuda_malloc(1002 * MiB);
  const Address b = *d.cuda_malloc(224 * MiB);
  CHECK(a == 0x7f0000000000ull);
  CHECK(b == a + 1002 * MiB);
  d.cuda_free(a, 1002 * MiB);
  CHECK(*d.cuda_malloc(2 * MiB) == a);
  CHECK(*d.cuda_malloc(3 * MiB) == a + 2 * MiB);  // rounded to the 2 MiB granularity
  CHECK(*d.cuda_malloc(2 * GiB) == b + 224 * MiB);
}

TEST_CASE("device addresses: the CUDA driver's order, downwards, freed ranges reused from their start") {
  // whatif_default_s33: 224 MiB segments each 224 MiB below the one before (0x7f90bc000000,
  // 0x7f90ae000000, ..., 0x7f9030000000, trace entries 54..155).
  Device d(DeviceSpec{.name = "driver", .total = 80 * GiB, .base_address = 0x7f90ca000000ull,
                      .address_order = AddressOrder::DriverTopDown});
  CHECK(*d.cuda_malloc(224 * MiB) == 0x7f90bc000000ull);
  CHECK(*d.cuda_malloc(224 * MiB) == 0x7f90ae000000ull);
  const Address big = 0x7f90ae000000ull - 1002 * MiB;
  CHECK(*d.cuda_malloc(1002 * MiB) == big);
  const Address guard = big - 224 * MiB;
  CHECK(*d.cuda_malloc(224 * MiB) == guard);
  // graphs_shared_s2: the 1002 MiB segment at 0x7f7550000000 freed by empty_cache (entry 2924),
  // then 2 MiB at 0x7f7550000000 and 20 MiB at 0x7f7550200000 (entries 2932, 2935): the freed range
  // is reused from its start, before fresh space.
  d.cuda_free(big, 1002 * MiB);
  CHECK(*d.cuda_malloc(2 * MiB) == big);
  CHECK(*d.cuda_malloc(20 * MiB) == big + 2 * MiB);
  // What fits in no freed range goes below everything.
  CHECK(*d.cuda_malloc(2 * GiB) == guard - 2 * GiB);
  // Freeing the lowest range gives its space back to the fresh space.
  d.cuda_free(guard - 2 * GiB, 2 * GiB);
  CHECK(*d.cuda_malloc(4 * GiB) == guard - 4 * GiB);
}
