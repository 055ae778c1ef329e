#include "sim/model/program_runner.hpp"

#include <algorithm>

namespace headroom::model {

void SlotTable::prepare(const AllocationProgram& program) {
  if (transient_.size() < program.slots) transient_.resize(program.slots, nullptr);
  persistent_.reserve(persistent_.size() + program.persistent);
}

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

}  // namespace

void run_program(alloc::CachingAllocator& allocator, const AllocationProgram& program, SlotTable& slots,
                 ProgramRun& r, const RunOptions& options) {
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
  r.layers.assign(static_cast<std::size_t>(program.layers), LayerRun{});
  r.completed = false;
  r.oom.reset();
  r.oom_op = 0;
  if (options.graph_pool) allocator.begin_allocate_to_pool(*options.graph_pool, options.stream);

  std::int32_t current_layer = kNoLayer;
  LayerRun* layer = nullptr;
  const std::size_t n = program.ops.size();
  for (std::size_t i = 0; i < n; ++i) {
    const ProgramOp& op = program.ops[i];
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
    if (op.kind == OpKind::free) {
      alloc::Block*& b = slots.transient(op.slot);
      allocator.free(b);
      b = nullptr;
      continue;
    }
    if (op.persistent && slots.persistent(op.slot)) {
      ++r.persistent_reused;
      continue;
    }
    alloc::Block* block = allocator.malloc(op.bytes, options.stream);
    ++r.allocations;
    if (!block) {
      r.oom = allocator.last_oom();
      r.oom_op = i;
      break;
    }
    if (op.persistent)
      slots.add_persistent(op.slot, block);  // capacity reserved by prepare()
    else
      slots.transient(op.slot) = block;
    Bytes allocated = above(allocator.allocated_bytes(), r.start_allocated);
    Bytes reserved = above(allocator.reserved_bytes(), r.start_reserved);
    if (allocated > r.peak_allocated) r.peak_allocated = allocated, r.peak_op = i;
    r.peak_reserved = std::max(r.peak_reserved, reserved);
    // One comparison per malloc; the op is kept by index (the caller names it).
    const Bytes free = allocator.device().free_bytes();
    if (free < r.min_device_free)
      r.min_device_free = free, r.min_device_free_op = i, r.reserved_at_min_free = allocator.reserved_bytes();
    r.min_free_or_cached = std::min(r.min_free_or_cached, free + allocator.reserved_bytes() - allocator.allocated_bytes());
    if (layer) {
      if (allocated > layer->peak_allocated) layer->peak_allocated = allocated, layer->peak_op = i;
      layer->peak_reserved = std::max(layer->peak_reserved, reserved);
    }
  }
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
  if (options.graph_pool) allocator.end_allocate_to_pool(*options.graph_pool);
  r.end_allocated = above(allocator.allocated_bytes(), r.start_allocated);
}

ProgramRun run_program(alloc::CachingAllocator& allocator, const AllocationProgram& program, SlotTable& slots,
                       const RunOptions& options) {
  ProgramRun r;
  run_program(allocator, program, slots, r, options);
  return r;
}

}  // namespace headroom::model
