#include "sim/allocator/sample_history.hpp"

#include <vector>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/core/rng.hpp"

namespace headroom::alloc {

Snapshot make_sample_history(const SampleHistoryOptions& o) {
  device::Device dev(device::DeviceSpec{.name = "sample", .total = o.capacity});
  CachingAllocator a(dev);
  a.record_history(true);
  Rng rng(o.seed);
  std::int64_t clock = 1'700'000'000'000'000;  // epoch microseconds, fixed for determinism
  auto tick = [&](std::int64_t us) { a.set_clock_us(clock += us); };
  const StreamId side_stream = 0x1000;

  // Parameters and optimizer state: allocated once, live for the whole history.
  std::vector<Block*> params;
  for (int l = 0; l < o.layers; ++l) {
    tick(10);
    params.push_back(a.malloc(o.hidden_bytes_per_token * 4096 * 3 + 512 * static_cast<Bytes>(l)));
    params.push_back(a.malloc(o.hidden_bytes_per_token + 64));  // a norm weight: small pool
  }
  for (int step = 0; step < o.steps; ++step) {
    // Forward: per layer a few activations of varying token counts (ragged batches).
    std::vector<Block*> saved;
    Bytes tokens = static_cast<Bytes>(o.tokens) - rng.uniform_int(0, static_cast<std::uint64_t>(o.tokens / 4));
    for (int l = 0; l < o.layers; ++l) {
      tick(20);
      saved.push_back(a.malloc(tokens * o.hidden_bytes_per_token));          // attention input
      Block* tmp = a.malloc(tokens * o.hidden_bytes_per_token * 3);          // qkv, dies at once
      saved.push_back(a.malloc(tokens * o.hidden_bytes_per_token * 7 / 2));  // MLP activation
      saved.push_back(a.malloc(4 * tokens + rng.uniform_int(0, 4096)));      // small: indices, scales
      a.free(tmp);
    }
    // A copy on a second stream (e.g. a prefetch), used and freed there.
    tick(5);
    Block* staged = a.malloc(tokens * o.hidden_bytes_per_token, side_stream);
    a.free(staged);
    // Backward: activations die in reverse; each layer makes gradients of its parameters.
    std::vector<Block*> grads;
    for (int l = o.layers - 1; l >= 0; --l) {
      tick(25);
      grads.push_back(a.malloc(o.hidden_bytes_per_token * 4096 * 3 + 512 * static_cast<Bytes>(l)));
      Block* work = a.malloc(tokens * o.hidden_bytes_per_token * 2);
      for (int k = 0; k < 3; ++k) {
        a.free(saved.back());
        saved.pop_back();
      }
      a.free(work);
    }
    // Optimizer: a temporary per parameter, then the gradients go.
    for (Block* g : grads) {
      tick(3);
      Block* t = a.malloc(g->requested_size);
      a.free(t);
      a.free(g);
    }
    if (step % 3 == 2) {
      tick(1);
      a.empty_cache();
    }
  }
  for (Block* p : params) a.free(p);
  tick(1);
  a.empty_cache();
  // Keep some state at the end so the snapshot has segments to compare.
  tick(1);
  Block* keep_large = a.malloc(o.hidden_bytes_per_token * 1024 + 12345);
  Block* keep_small = a.malloc(777);
  (void)keep_large;
  (void)keep_small;
  return a.snapshot();
}

}  // namespace headroom::alloc
