#include "sim/model/program_runner.hpp"

#include <algorithm>

namespace headroom::model {

alloc::Block* SlotTable::persistent(std::uint32_t key) const {
  for (const auto& [k, block] : persistent_)
    if (k == key) return block;
  return nullptr;
}

void SlotTable::add_persistent(std::uint32_t key, alloc::Block* block) { persistent_.emplace_back(key, block); }

Bytes SlotTable::persistent_bytes() const {
  Bytes n = 0;
  for (const auto& entry : persistent_) n += entry.second->size;
  return n;
}

void SlotTable::release(alloc::CachingAllocator& allocator) {
  for (alloc::Block*& b : transient_)
    if (b) allocator.free(b), b = nullptr;
  for (auto& entry : persistent_) allocator.free(entry.second);
  persistent_.clear();
}

namespace {

Bytes above(Bytes now, Bytes start) { return now > start ? now - start : 0; }

// The ops loop. The figures are kept in locals (raw allocator values, the start subtracted once at
// the end), so they stay in registers across the allocator calls; kLayers adds the per-layer peaks,
// which the serving loop never reads (RunOptions::layer_peaks). The ops, the slot table and the
// stream are read through locals too: the allocator calls could change them as far as the
// compiler knows, and would have them reloaded on every op.
// kMade: every block malloc returns is listed in `made` (a run kept in a RunMemo); returns how many.
template <bool kLayers, bool kMade = false>
std::size_t run_ops(alloc::CachingAllocator& allocator, const AllocationProgram& program, SlotTable& slots,
                    ProgramRun& r, const RunOptions& options, Address* made = nullptr) {
  std::size_t n_made = 0;
  const device::Device& device = allocator.device();
  Bytes peak_allocated = r.start_allocated, peak_reserved = r.start_reserved;
  std::size_t peak_op = 0;
  Bytes min_free = r.min_device_free, min_loose = r.min_free_or_cached;
  std::optional<std::size_t> min_free_op;
  Bytes reserved_at_min_free = r.reserved_at_min_free;
  // cudaMemGetInfo's free is a function of the device's driver allocations (Device::free_bytes:
  // total less context, other processes and used), which change only when used does: asked again
  // only then.
  Bytes used = device.used_bytes(), free = min_free;
  std::int64_t allocations = 0, persistent_reused = 0;
  std::int32_t current_layer = kNoLayer;
  LayerRun* layer = nullptr;
  const ProgramOp* const ops = program.ops.data();
  const std::size_t n = program.ops.size();
  alloc::Block** const transient = slots.transient_data();  // sized by prepare(); add_persistent leaves it
  const StreamId stream = options.stream;
  for (std::size_t i = 0; i < n; ++i) {
    const ProgramOp& op = ops[i];
    if constexpr (kLayers) {
      if (op.layer != current_layer) {
        current_layer = op.layer;
        layer = op.layer >= 0 ? &r.layers[static_cast<std::size_t>(op.layer)] : nullptr;
        if (layer) {
          Bytes now = above(allocator.allocated_bytes(), r.start_allocated);
          layer->entry_allocated = layer->peak_allocated = now;
          layer->peak_reserved = above(allocator.reserved_bytes(), r.start_reserved);
          layer->peak_op = i;
        }
      }
    }
    if (op.kind == OpKind::free) {
      alloc::Block*& b = transient[op.slot];
      allocator.free(b);
      b = nullptr;
      continue;
    }
    if (op.persistent && slots.persistent(op.slot)) [[unlikely]] {
      ++persistent_reused;
      continue;
    }
    alloc::Block* block = allocator.malloc(op.bytes, stream);
    ++allocations;
    if (!block) [[unlikely]] {
      r.oom = allocator.last_oom();
      r.oom_op = i;
      break;
    }
    if constexpr (kMade) made[n_made++] = block->ptr;
    if (op.persistent) [[unlikely]]
      slots.add_persistent(op.slot, block);  // capacity reserved by prepare()
    else
      transient[op.slot] = block;
    const Bytes allocated = allocator.allocated_bytes();
    const Bytes reserved = allocator.reserved_bytes();
    if (allocated > peak_allocated) peak_allocated = allocated, peak_op = i;
    if (reserved > peak_reserved) peak_reserved = reserved;
    // One comparison per malloc; the op is kept by index (the caller names it).
    if (device.used_bytes() != used) [[unlikely]] {
      used = device.used_bytes();
      free = device.free_bytes();
      if (free < min_free) min_free = free, min_free_op = i, reserved_at_min_free = reserved;
    }
    const Bytes loose = free + reserved - allocated;
    if (loose < min_loose) min_loose = loose;
    if constexpr (kLayers) {
      if (layer) {
        const Bytes above_allocated = above(allocated, r.start_allocated);
        if (above_allocated > layer->peak_allocated) layer->peak_allocated = above_allocated, layer->peak_op = i;
        layer->peak_reserved = std::max(layer->peak_reserved, above(reserved, r.start_reserved));
      }
    }
  }
  r.peak_allocated = above(peak_allocated, r.start_allocated);
  r.peak_reserved = above(peak_reserved, r.start_reserved);
  r.peak_op = peak_op;
  r.min_device_free = min_free;
  r.min_device_free_op = min_free_op;
  r.reserved_at_min_free = reserved_at_min_free;
  r.min_free_or_cached = min_loose;
  r.allocations = allocations;
  r.persistent_reused = persistent_reused;
  return n_made;
}

// The result's starting figures, before the first op.
void start_run(alloc::CachingAllocator& allocator, const AllocationProgram& program, SlotTable& slots, ProgramRun& r,
               const RunOptions& options) {
  slots.prepare(program);
  r.start_allocated = allocator.allocated_bytes();
  r.start_reserved = allocator.reserved_bytes();
  r.peak_allocated = r.peak_reserved = 0;
  r.peak_op = 0;
  r.min_device_free = allocator.device().free_bytes();
  r.min_device_free_op.reset();
  r.reserved_at_min_free = r.start_reserved;
  r.min_free_or_cached = r.min_device_free + (r.start_reserved - r.start_allocated);
  r.end_allocated = 0;
  r.allocations = r.persistent_reused = 0;
  if (options.layer_peaks)
    r.layers.assign(static_cast<std::size_t>(program.layers), LayerRun{});
  else
    r.layers.clear();
  r.completed = false;
  r.oom.reset();
  r.oom_op = 0;
}

// After the last op: an OOM unwinds the transient blocks; the figures at the end.
void finish_run(alloc::CachingAllocator& allocator, SlotTable& slots, ProgramRun& r) {
  if (r.oom) {
    // Unwinding drops every tensor of the failed step; in PyTorch order does not matter to the
    // sizes, here the highest slot goes first.
    for (std::size_t s = slots.transient_size(); s-- > 0;) {
      alloc::Block*& b = slots.transient(static_cast<std::uint32_t>(s));
      if (b) allocator.free(b), b = nullptr;
    }
  } else {
    r.completed = true;
  }
  r.end_allocated = above(allocator.allocated_bytes(), r.start_allocated);
}

}  // namespace

void run_program(alloc::CachingAllocator& allocator, const AllocationProgram& program, SlotTable& slots,
                 ProgramRun& r, const RunOptions& options) {
  start_run(allocator, program, slots, r, options);
  if (options.graph_pool) allocator.begin_allocate_to_pool(*options.graph_pool, options.stream);
  if (options.layer_peaks)
    run_ops<true>(allocator, program, slots, r, options);
  else
    run_ops<false>(allocator, program, slots, r, options);
  finish_run(allocator, slots, r);
  if (options.graph_pool) allocator.end_allocate_to_pool(*options.graph_pool);
}

bool run_program(alloc::CachingAllocator& allocator, const AllocationProgram& program, SlotTable& slots,
                 ProgramRun& r, const RunOptions& options, RunMemo& memo) {
  if (options.graph_pool || options.layer_peaks) {
    run_program(allocator, program, slots, r, options);
    return false;
  }
  const Bytes device_free = allocator.device().free_bytes();
  if (memo.state == allocator.state_id() && memo.device_free == device_free) {
    allocator.repeat(memo.effect);
    r = memo.run;  // no layers, no OOM: copying allocates nothing
    return true;
  }
  const alloc::RunMark mark = allocator.begin_run();
  const std::size_t persistent = slots.persistent_count();
  start_run(allocator, program, slots, r, options);
  const std::size_t made = run_ops<false, true>(allocator, program, slots, r, options, slots.made_for(program));
  finish_run(allocator, slots, r);
  // Closed on the program's side: it ran to its end and freed every block it allocated, and a
  // program frees only its own transient blocks (ProgramBuilder::finish: none is left live, and a
  // free names an earlier alloc).
  const bool closed = r.completed && r.end_allocated == 0 && slots.persistent_count() == persistent;
  if (allocator.end_run(mark, closed, slots.made(made), options.stream, memo.effect)) {
    memo.state = mark.state;
    memo.device_free = device_free;
    memo.run = r;
  } else {
    memo.state.reset();  // its effect was overwritten
  }
  return false;
}

ProgramRun run_program(alloc::CachingAllocator& allocator, const AllocationProgram& program, SlotTable& slots,
                       const RunOptions& options) {
  ProgramRun r;
  run_program(allocator, program, slots, r, options);
  return r;
}

}  // namespace headroom::model
