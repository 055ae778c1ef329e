#pragma once
// Runs an allocation program through the caching allocator model and measures it: peak allocated
// and reserved above the starting point (the allocator's rounded sizes and segments), the peak
// within each decoder layer, the malloc count, and the OOM if one happens. The loop allocates
// nothing: the slot table and the result are the caller's and keep their capacity between runs.
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "sim/allocator/block_pool.hpp"
#include "sim/allocator/caching_allocator.hpp"
#include "sim/model/allocation_program.hpp"

namespace headroom::model {

// Blocks held by programs run through one allocator: the transient slots of the program running
// now, and the persistent buffers (workspaces, cached layer buffers) kept between runs and shared
// by every program of the model, found again by persistent_key().
class SlotTable {
 public:
  SlotTable() = default;
  SlotTable(const SlotTable&) = delete;
  SlotTable& operator=(const SlotTable&) = delete;

  // Sizes the table for `program` (allocates only when it grows). Inline: every step asks.
  void prepare(const AllocationProgram& program) {
    if (transient_.size() < program.slots) [[unlikely]] transient_.resize(program.slots, nullptr);
    if (persistent_.capacity() - persistent_.size() < program.persistent) [[unlikely]]
      persistent_.reserve(persistent_.size() + program.persistent);
  }
  // The address of every block a run's mallocs returned (a run kept in a RunMemo lists them for
  // CachingAllocator::end_run); sized by the program's ops, so listing allocates nothing.
  Address* made_for(const AllocationProgram& program) {
    if (made_.size() < program.ops.size()) [[unlikely]] made_.resize(program.ops.size(), 0);
    return made_.data();
  }
  std::span<const Address> made(std::size_t n) const { return {made_.data(), n}; }
  alloc::Block*& transient(std::uint32_t slot) { return transient_[slot]; }
  // The transient table's first entry: stable until the next prepare() (the runner's ops loop).
  alloc::Block** transient_data() { return transient_.data(); }
  std::size_t transient_size() const { return transient_.size(); }
  alloc::Block* persistent(std::uint32_t key) const;
  void add_persistent(std::uint32_t key, alloc::Block* block);  // no allocation after prepare()
  std::size_t persistent_count() const { return persistent_.size(); }
  Bytes persistent_bytes() const;
  // Frees every held block (persistent buffers included) back to `allocator`.
  void release(alloc::CachingAllocator& allocator);

 private:
  std::vector<alloc::Block*> transient_;
  std::vector<std::pair<std::uint32_t, alloc::Block*>> persistent_;
  std::vector<Address> made_;
};

struct RunOptions {
  // Allocate into this private pool, as during CUDA-graph capture (begin/end_allocate_to_pool).
  std::optional<alloc::PoolId> graph_pool;
  StreamId stream = 0;
  // ProgramRun::layers: the peak within each decoder layer. Off (the serving loop, which never
  // reads them), layers stays empty and each op costs a few instructions less.
  bool layer_peaks = true;
};

struct LayerRun {
  Bytes entry_allocated = 0;  // allocated above the run's start when the layer's first op ran
  Bytes peak_allocated = 0;   // most allocated above the run's start during the layer
  Bytes peak_reserved = 0;    // most reserved above the run's start during the layer
  std::size_t peak_op = 0;    // the allocation that reached peak_allocated
};

struct ProgramRun {
  Bytes start_allocated = 0;  // allocator state before the first op
  Bytes start_reserved = 0;
  Bytes peak_allocated = 0;   // most allocated above the start during the run
  Bytes peak_reserved = 0;    // most reserved above the start during the run
  std::size_t peak_op = 0;
  // cudaMemGetInfo's free at its lowest during the run (before the first op, or after the malloc
  // that lowered it), and that malloc's op (none: no malloc took memory from the device).
  Bytes min_device_free = 0;
  std::optional<std::size_t> min_device_free_op;
  Bytes reserved_at_min_free = 0;       // allocator reserved then
  // Free plus torch's cached-but-free bytes (reserved − allocated) at their lowest: what the run
  // could still have allocated, were the cached blocks not split into pieces.
  Bytes min_free_or_cached = 0;
  Bytes end_allocated = 0;    // above the start at the end: persistent buffers this run created
  std::int64_t allocations = 0;         // malloc calls made
  std::int64_t persistent_reused = 0;   // persistent allocations skipped: the buffer was held
  std::vector<LayerRun> layers;         // per decoder layer (RunOptions::layer_peaks); layers the run never reached stay zero
  bool completed = false;
  std::optional<alloc::OomInfo> oom;    // set when a malloc failed; the run stopped there
  std::size_t oom_op = 0;
};

// Runs `program`; on OOM frees the transient blocks it holds (as unwinding would) and stops,
// keeping any persistent buffer already created. `result` is overwritten.
void run_program(alloc::CachingAllocator& allocator, const AllocationProgram& program, SlotTable& slots,
                 ProgramRun& result, const RunOptions& options = {});

// A program's last closed run (alloc::ClosedRun: it left the allocator's memory map as it found it)
// and what it measured. The same program from the same memory map, with the same free device
// memory, runs the same again, so the run is applied instead of running the ops. Kept beside its
// program by the program's owner and valid while the program is unchanged (a rebuilt or refilled
// program starts with an empty memo).
struct RunMemo {
  std::optional<alloc::StateId> state;  // the allocator state the run started in; none: no closed run yet
  Bytes device_free = 0;                // cudaMemGetInfo's free then
  alloc::ClosedRun effect;
  ProgramRun run;
};

// run_program, applying `memo`'s run where it holds (returns true) and keeping the run in it when it
// is closed (the serving loop's steps). A run with a graph pool or per-layer peaks always runs its ops.
bool run_program(alloc::CachingAllocator& allocator, const AllocationProgram& program, SlotTable& slots,
                 ProgramRun& result, const RunOptions& options, RunMemo& memo);

ProgramRun run_program(alloc::CachingAllocator& allocator, const AllocationProgram& program, SlotTable& slots,
                       const RunOptions& options = {});

}  // namespace headroom::model
