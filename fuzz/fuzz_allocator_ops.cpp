// Fuzz target: the caching-allocator model driven by fuzzer-chosen operation sequences, with the
// invariant checker after every operation (set_check_each_operation: blocks tile each segment, no
// overlap, free sets hold exactly the free blocks, every statistic equals its recomputation).
//
// The input's first bytes pick the device (a small capacity, 32 to 528 MiB, so that OOM, the
// release-and-retry path and oversize blocks are reached), the configuration, and whether history
// is recorded; then each operation is one byte plus its operands: malloc (sizes in every pool and
// size class, now and then beyond the device), free, free_requested/free_completed,
// record_stream, synchronize, empty_cache, CUDA-graph private pools (begin/end allocate to pool,
// release_pool), set_config, would_reuse_cached_block, observations (stats, fragmentation,
// snapshot) and stats resets. Only sequences PyTorch's callers can make are generated (a block is
// freed once; a pool is released at most as often as it was begun, after its capture ended).
// malloc returning nullptr is the allocator's OOM; it must come with its OomInfo. A check that
// throws (std::logic_error), a crash or a sanitizer report is a finding. HEADROOM_FUZZ_VERBOSE=1
// prints the decoded operations (to reduce a finding to a unit test).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/support/byte_reader.hpp"
#include "fuzz/support/finding.hpp"
#include "sim/allocator/caching_allocator.hpp"

namespace {

using namespace headroom;
using namespace headroom::alloc;
using headroom::fuzz::require;

// Configurations a run starts with or switches to (set_config); each a documented option
// combination (spec §0), including expandable segments and the GC threshold with a fraction.
const std::vector<AllocatorConfig>& configs() {
  static const std::vector<AllocatorConfig> all = [] {
    std::vector<AllocatorConfig> v;
    for (const char* text : {"", "max_split_size_mb:64", "expandable_segments:True",
                             "roundup_power2_divisions:4",
                             "garbage_collection_threshold:0.6,per_process_memory_fraction:0.8",
                             "expandable_segments:True,max_split_size_mb:40",
                             "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
                             "max_split_size_mb:32,garbage_collection_threshold:0.5,per_process_memory_fraction:0.9",
                             "expandable_segments:True,per_process_memory_fraction:0.5"})
      v.push_back(parse_alloc_conf(text, "fuzz_allocator_ops"));
    return v;
  }();
  return all;
}

Bytes request_size(fuzz::ByteReader& in, Bytes capacity) {
  const std::uint8_t size_class = in.byte();
  const std::uint64_t r = in.integer(4);
  switch (size_class % 8) {
    case 0: return 1 + r % 4096;                              // small pool, sub-page
    case 1:
    case 2: return 1 + r % (1 * MiB);                         // small pool
    case 3:
    case 4: return 1 * MiB + 1 + r % (9 * MiB);               // large, below 10 MiB (20 MiB segments)
    case 5: return 10 * MiB + r % (54 * MiB);                 // large
    case 6: return 1 + r % (capacity + capacity / 4);         // up to beyond the device
    default: return size_class == 255 ? (Bytes{1} << 60) + r : 1 + r % (256 * MiB);  // >= 1 EB fails up front
  }
}

struct Capture {
  PoolId pool;
  StreamId stream;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::ByteReader in(data, size);
  const Bytes capacity = 32 * MiB + (in.byte() % 32) * 16 * MiB;
  const std::uint8_t setup = in.byte();
  device::Device dev(device::DeviceSpec{.name = "fuzz", .total = capacity});
  CachingAllocator allocator(dev, configs()[setup % configs().size()]);
  allocator.set_check_each_operation(true);
  if (setup & 0x80) allocator.record_history(true, 1 + in.byte());

  std::vector<Block*> live;
  std::vector<Block*> pending;              // free_requested, free_completed not yet called
  std::vector<Capture> captures;            // begun, not ended
  std::vector<std::pair<PoolId, int>> uses; // begun minus released, per pool
  auto use_of = [&](PoolId pool) -> int& {
    for (auto& [p, n] : uses)
      if (p == pool) return n;
    return uses.emplace_back(pool, 0).second;
  };
  std::int64_t clock = 0;

  for (int op = 0; op < 4096 && !in.empty(); ++op) {
    allocator.set_clock_us(clock += 1 + in.byte());
    const std::uint8_t kind = in.byte() % 18;
    const StreamId stream = in.byte() % 4;
    static const bool verbose = std::getenv("HEADROOM_FUZZ_VERBOSE") != nullptr;
    if (verbose)
      std::fprintf(stderr, "op %d: kind %d stream %d (live %zu, pending %zu, captures %zu, reserved %llu)\n", op,
                   int{kind}, static_cast<int>(stream), live.size(), pending.size(), captures.size(),
                   static_cast<unsigned long long>(allocator.reserved_bytes()));
    switch (kind) {
      case 0: case 1: case 2: case 3: {
        const Bytes n = request_size(in, capacity);
        Block* b = allocator.malloc(n, stream);
        if (verbose) std::fprintf(stderr, "  malloc(%llu) -> %p\n", static_cast<unsigned long long>(n), static_cast<void*>(b));
        if (b) {
          require(b->size >= n, "malloc returned a block smaller than the request");
          live.push_back(b);
        } else {
          require(allocator.last_oom().has_value(), "malloc failed without an OOM report");
          (void)allocator.last_oom()->message();
        }
        break;
      }
      case 4: case 5:
        if (!live.empty()) {
          const std::size_t i = in.index(live.size());
          allocator.free(live[i]);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        }
        break;
      case 6:
        if (!live.empty()) {
          const std::size_t i = in.index(live.size());
          allocator.free_requested(live[i]);
          pending.push_back(live[i]);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        }
        break;
      case 7:
        if (!pending.empty()) {
          const std::size_t i = in.index(pending.size());
          allocator.free_completed(pending[i]);
          pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
        }
        break;
      case 8:
        if (!live.empty()) allocator.record_stream(live[in.index(live.size())], stream);
        break;
      case 9: allocator.synchronize(); pending.clear(); break;
      case 10: allocator.empty_cache(); pending.clear(); break;
      case 11:
        if (captures.size() < 4) {
          const PoolId pool{1, 1 + in.byte() % 3};
          allocator.begin_allocate_to_pool(pool, stream);
          captures.push_back({pool, stream});
          ++use_of(pool);
        }
        break;
      case 12:
        if (!captures.empty()) {
          const std::size_t i = in.index(captures.size());
          allocator.end_allocate_to_pool(captures[i].pool);
          captures.erase(captures.begin() + static_cast<std::ptrdiff_t>(i));
        }
        break;
      case 13: {
        const PoolId pool{1, 1 + in.byte() % 3};
        const bool capturing = std::any_of(captures.begin(), captures.end(), [&](const Capture& c) { return c.pool == pool; });
        int& n = use_of(pool);
        if (n > 0 && !capturing) {
          allocator.release_pool(pool);
          --n;
        }
        break;
      }
      case 14: allocator.set_config(configs()[in.byte() % configs().size()]); break;
      case 15: (void)allocator.would_reuse_cached_block(request_size(in, capacity), stream); break;
      case 16: {
        const AllocatorStats& stats = allocator.stats();
        (void)stats;
        const Fragmentation f = allocator.fragmentation();
        require(f.reserved == allocator.reserved_bytes() && f.allocated == allocator.allocated_bytes(),
                "fragmentation() disagrees with reserved_bytes()/allocated_bytes()");
        require(f.allocated <= f.reserved, "more allocated than reserved");
        (void)allocator.snapshot();
        break;
      }
      default:
        if (in.byte() & 1) allocator.reset_peak_stats();
        else allocator.reset_accumulated_stats();
        break;
    }
    require(dev.used_bytes() <= capacity, "the device hands out more than its capacity");
  }

  // Everything freed: nothing is allocated any more.
  for (Block* b : live) allocator.free(b);
  for (const Capture& c : captures) allocator.end_allocate_to_pool(c.pool);
  allocator.synchronize();
  require(allocator.allocated_bytes() == 0, "bytes still allocated after every block was freed");
  allocator.check_invariants();
  return 0;
}
