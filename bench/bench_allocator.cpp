// Allocator throughput on a realistic mix: the shapes of per-layer activations of a serving step
// (a few large GEMM outputs, many small ones) allocated and freed in stack-like order with some
// interleaving, as a forward pass does. Each iteration is one malloc + one free. Figures print; nothing
// here passes or fails.
#include <vector>

#include <benchmark/benchmark.h>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/core/rng.hpp"

using namespace headroom;
using namespace headroom::alloc;

namespace {

std::vector<Bytes> activation_mix(std::size_t n, std::uint64_t seed) {
  // Sizes per token of a Llama-style layer (serving-memory-model §4a) for token counts 1..8192,
  // plus small metadata tensors (positions, indices, scales).
  const Bytes per_token[] = {12 * KiB, 8 * KiB, 8 * KiB, 56 * KiB, 28 * KiB, 8 * KiB};
  Rng rng(seed);
  std::vector<Bytes> sizes;
  sizes.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (rng.uniform() < 0.35) {
      sizes.push_back(rng.uniform_int(8, 64 * KiB));  // metadata: small pool
    } else {
      Bytes tokens = rng.uniform() < 0.7 ? rng.uniform_int(1, 512) : rng.uniform_int(512, 8192);
      sizes.push_back(tokens * per_token[rng.uniform_int(0, 5)]);
    }
  }
  return sizes;
}

void BM_MallocFree_ActivationMix(benchmark::State& state) {
  device::Device dev(device::DeviceSpec{.total = 80 * GiB});
  CachingAllocator a(dev);
  std::vector<Bytes> sizes = activation_mix(1 << 16, 1);
  std::vector<Block*> live(8, nullptr);  // a window of live tensors, freed oldest first
  std::size_t i = 0, slot = 0;
  for (auto _ : state) {
    if (live[slot]) a.free(live[slot]);
    live[slot] = a.malloc(sizes[i]);
    benchmark::DoNotOptimize(live[slot]);
    slot = (slot + 1) & 7;
    i = (i + 1) & ((1 << 16) - 1);
  }
  for (Block* b : live)
    if (b) a.free(b);
  state.SetItemsProcessed(state.iterations());  // one malloc + one free per item
  state.counters["segments"] = static_cast<double>(a.stats().segment[kAll].current);
}
BENCHMARK(BM_MallocFree_ActivationMix);

void BM_MallocFree_SameSize(benchmark::State& state) {
  device::Device dev(device::DeviceSpec{.total = 80 * GiB});
  CachingAllocator a(dev);
  for (auto _ : state) {
    Block* b = a.malloc(static_cast<Bytes>(state.range(0)));
    benchmark::DoNotOptimize(b);
    a.free(b);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MallocFree_SameSize)->Arg(4096)->Arg(64 << 20);

void BM_MallocFree_ManyStreamsFragmented(benchmark::State& state) {
  // A cache with hundreds of free blocks on 4 streams: the ordered-set search dominates.
  device::Device dev(device::DeviceSpec{.total = 80 * GiB});
  CachingAllocator a(dev);
  std::vector<Bytes> sizes = activation_mix(1 << 16, 2);
  std::vector<Block*> keep;
  for (std::size_t k = 0; k < 2000; ++k) keep.push_back(a.malloc(sizes[k], k % 4));
  for (std::size_t k = 0; k < keep.size(); k += 2) a.free(keep[k]);
  std::size_t i = 0;
  for (auto _ : state) {
    Block* b = a.malloc(sizes[i], i % 4);
    benchmark::DoNotOptimize(b);
    a.free(b);
    i = (i + 1) & ((1 << 16) - 1);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["free_blocks"] = static_cast<double>(a.fragmentation().free_blocks);
}
BENCHMARK(BM_MallocFree_ManyStreamsFragmented);

}  // namespace

BENCHMARK_MAIN();
