// Allocator throughput. ForwardPasses is the realistic mix: the allocations and frees the simulator
// itself issues, the allocation programs of Llama-3.1-8B serving steps over a spread of batch shapes
// (decode batches and prefill chunks). ActivationMix is harsher: the same kinds of sizes drawn at
// random, so that no two consecutive requests look alike (the branch predictor learns nothing).
// items_per_second counts operations, a malloc and a free each one (a malloc+free pair is two).
// Figures print; nothing here passes or fails.
#include <vector>

#include <benchmark/benchmark.h>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/core/rng.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/step_program.hpp"

using namespace headroom;
using namespace headroom::alloc;

namespace {

std::vector<Bytes> activation_mix(std::size_t n, std::uint64_t seed) {
  // Sizes per token of a Llama-style layer (docs/serving-memory-model.md §4a) for token counts 1..8192,
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
  state.SetItemsProcessed(2 * state.iterations());  // one malloc + one free per iteration
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
  state.SetItemsProcessed(2 * state.iterations());
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
  state.SetItemsProcessed(2 * state.iterations());
  state.counters["free_blocks"] = static_cast<double>(a.fragmentation().free_blocks);
}
BENCHMARK(BM_MallocFree_ManyStreamsFragmented);

void BM_ForwardPasses(benchmark::State& state) {
  // Serving steps as a continuous-batching engine runs them: mostly decode batches of 1-256
  // sequences, some steps with a prefill chunk (up to the 8192-token budget) beside the decodes.
  const model::ModelConfig llama = model::catalogue_model("Llama-3.1-8B");
  Rng rng(3);
  std::vector<model::AllocationProgram> steps;
  for (int k = 0; k < 64; ++k) {
    model::ForwardShape shape;
    shape.decode_seqs = rng.uniform_int(1, 256);
    std::int64_t prefill = rng.uniform() < 0.3 ? rng.uniform_int(16, 8192 - shape.decode_seqs) : 0;
    shape.seqs = shape.decode_seqs + (prefill > 0 ? 1 : 0);
    shape.tokens = shape.decode_seqs + prefill;
    steps.push_back(model::step_program(llama, shape));
  }
  std::uint32_t slots = 0;
  std::vector<std::int64_t> counted(steps.size(), 0);  // mallocs + frees of a step (persistent ones aside)
  for (std::size_t s = 0; s < steps.size(); ++s) {
    slots = std::max(slots, steps[s].slots);
    for (const model::ProgramOp& op : steps[s].ops) counted[s] += op.persistent ? 0 : 1;
  }
  std::vector<Block*> slot(slots, nullptr);
  std::vector<std::pair<std::uint32_t, Block*>> persistent;  // buffers kept across steps
  device::Device dev(device::DeviceSpec{.total = 80 * GiB});
  CachingAllocator a(dev);
  std::int64_t ops = 0;
  std::size_t k = 0;
  for (auto _ : state) {
    for (const model::ProgramOp& op : steps[k].ops) {
      if (op.kind == model::OpKind::free) {
        a.free(slot[op.slot]);
      } else if (op.persistent) {
        bool held = false;
        for (const auto& [key, b] : persistent) held = held || key == op.slot;
        if (!held) persistent.emplace_back(op.slot, a.malloc(op.bytes));
      } else {
        slot[op.slot] = a.malloc(op.bytes);
        benchmark::DoNotOptimize(slot[op.slot]);
      }
    }
    ops += counted[k];
    k = (k + 1) % steps.size();
  }
  state.SetItemsProcessed(ops);  // mallocs + frees; the few persistent buffers are not counted
  state.counters["ops_per_step"] = static_cast<double>(ops) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ForwardPasses);

}  // namespace

BENCHMARK_MAIN();
