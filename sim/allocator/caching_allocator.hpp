#pragma once
// The PyTorch CUDA caching allocator (native backend, c10/cuda/CUDACachingAllocator.cpp) for one
// device, to the byte and to the address: docs/allocator-model.md is the reference
// and each rule below is a small named function as in PyTorch. Single-threaded; the hot path
// (malloc/free served from the cache) does not allocate.
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "sim/allocator/alloc_config.hpp"
#include "sim/allocator/block.hpp"
#include "sim/allocator/block_arena.hpp"
#include "sim/allocator/block_pool.hpp"
#include "sim/allocator/closed_run.hpp"
#include "sim/allocator/expandable_segment.hpp"
#include "sim/allocator/oom.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/allocator/stats.hpp"
#include "sim/device/device.hpp"

namespace headroom::alloc {

// Fragmentation figures at one instant.
struct Fragmentation {
  Bytes reserved = 0;
  Bytes allocated = 0;
  Bytes reserved_unallocated = 0;   // reserved - allocated
  Bytes largest_free_block = 0;     // largest cached free (mapped) block, any pool
  std::int64_t free_blocks = 0;     // cached free (mapped) blocks, all pools
};

// A block of a segment that existed before a replayed history began (replay start state).
struct SeedBlock {
  Address ptr = 0;
  Bytes size = 0;
  Bytes requested_size = 0;
  bool allocated = false;
  bool pending_free = false;  // active_pending_free: freed but its events have not completed
};

class CachingAllocator {
 public:
  explicit CachingAllocator(device::Device& device, AllocatorConfig config = {});
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // --- the caller's API (torch.cuda.caching_allocator_alloc / delete and friends) ---
  // Returns the block, or nullptr when PyTorch would raise OutOfMemoryError (see last_oom()).
  // `size` must be > 0: PyTorch returns nullptr for 0 bytes without touching the allocator.
  Block* malloc(Bytes size, StreamId stream = 0);
  void free(Block* block);
  void record_stream(Block* block, StreamId stream);  // Tensor.record_stream
  void synchronize();   // all outstanding stream events complete (cudaDeviceSynchronize)
  void empty_cache();   // torch.cuda.empty_cache()
  // _set_allocator_settings: re-parses options; existing segments keep their kind.
  void set_config(AllocatorConfig config);
  const AllocatorConfig& config() const { return config_; }

  // Whether malloc(requested, stream) would be served from the cache now, without a device call.
  bool would_reuse_cached_block(Bytes requested, StreamId stream);

  // Two-phase free as a recorded history shows it: free_requested now, free_completed later.
  void free_requested(Block* block);   // allocated -> active_pending_free
  void free_completed(Block* block);   // active_pending_free -> inactive (coalesces)

  // --- CUDA graph private pools (beginAllocateToPool / endAllocateToPool / releasePool) ---
  void begin_allocate_to_pool(PoolId pool, StreamId stream);
  void end_allocate_to_pool(PoolId pool);
  void release_pool(PoolId pool);
  bool capture_underway() const { return !captures_underway_.empty(); }

  // --- closed runs (closed_run.hpp): a run that leaves the state as it found it, done again ---
  StateId state_id() const { return {epoch_, operations() - operations_offset_}; }
  // Starts a run: the statistics' peaks start again from the current values, so that end_run reads
  // the run's own.
  RunMark begin_run();
  // Ends the run begun at `mark` (begin_run), the peaks back to the highest of before and during it.
  // `made`: the address of every block malloc returned during the run, all on `stream`; the caller
  // freed all of them and no other block (`caller_closed`). When the allocator
  // also finds its memory map as at the mark (plain configuration throughout, no segment created or
  // released, no retry, OOM or new epoch), writes the run's effect into `run`, state_id() is the
  // mark's again, and returns true.
  bool end_run(const RunMark& mark, bool caller_closed, std::span<const Address> made, StreamId stream, ClosedRun& run);
  // `run` once more, for the same operations from a state with the id its mark had: the statistics
  // it changed and the requested sizes it wrote.
  void repeat(const ClosedRun& run);

  // --- observation ---
  // torch.cuda.memory_stats(); the reference stays valid, its values are those of the last call.
  const AllocatorStats& stats() const {
    settle_peaks();
    hot_.view_into(stats_);
    if (!active_apart_) {  // active == allocation until some free waits for an event
      stats_.active = stats_.allocation;
      stats_.active_bytes = stats_.allocated_bytes;
    }
    return stats_;
  }
  void reset_peak_stats() {
    settle_peaks();
    stats_.reset_peak();
    hot_.for_each([](PooledStat& s) { s.reset_peak(); });
  }
  void reset_accumulated_stats() {
    stats_.reset_accumulated();
    hot_.for_each([](PooledStat& s) { s.reset_accumulated(); });
    ++epoch_;  // operations() counts from the reset
  }
  Bytes allocated_bytes() const {
    return static_cast<Bytes>(hot_.allocated_bytes.pool[0].current + hot_.allocated_bytes.pool[1].current);
  }
  Bytes reserved_bytes() const {
    return static_cast<Bytes>(hot_.reserved_bytes.pool[0].current + hot_.reserved_bytes.pool[1].current);
  }
  Bytes private_pool_reserved_bytes() const;
  const std::optional<OomInfo>& last_oom() const { return last_oom_; }
  Fragmentation fragmentation() const;
  device::Device& device() { return device_; }
  const device::Device& device() const { return device_; }

  // History recording (torch.cuda.memory._record_memory_history): a ring of at most max_entries.
  void record_history(bool enabled, std::size_t max_entries = std::numeric_limits<std::size_t>::max());
  void set_clock_us(std::int64_t t) { clock_us_ = t; }
  std::vector<TraceEvent> history() const;
  // torch.cuda.memory._snapshot(): segments (address-sorted) + trace + settings.
  Snapshot snapshot() const;
  // Its `segments` alone (no history copied): the memory map at one moment.
  std::vector<SnapshotSegment> segments() const;

  // Throws std::logic_error naming the first broken invariant: blocks tile each segment exactly,
  // no overlap, free sets hold exactly the free blocks, every statistic equals its recomputation.
  void check_invariants() const;
  // Debugging mode (`headroom run --check`): check_invariants() at the end of every operation of the
  // caller's API (malloc, free, free_requested/free_completed, record_stream, synchronize,
  // empty_cache, set_config, the graph-pool calls, seed_segment). Slow: each check walks every block.
  void set_check_each_operation(bool on) {
    check_each_operation_ = on;
    choose_path();
  }
  bool check_each_operation() const { return check_each_operation_; }

  // Replay start state: adopts a segment that was cudaMalloc'd before the history began.
  // Returns the created blocks in address order. Stats count it as current state.
  std::vector<Block*> seed_segment(Address address, StreamId stream, bool small_pool,
                                   const std::vector<SeedBlock>& blocks);

 private:
  struct AllocParams {
    Bytes requested = 0;
    Bytes size = 0;        // rounded
    Bytes alloc_size = 0;  // segment size if a new one is needed
    StreamId stream = 0;
    BlockPool* pool = nullptr;
    BlockSet* set = nullptr;  // the pool's free blocks on the stream, when the block came from them
    Block* block = nullptr;
    bool block_in_free_set = false;  // found in the cache: still linked, unlinked by alloc_found_block
  };

  // malloc() and free() begin with a fast path for the plain configuration (plain_): the cache path
  // with no rule that configuration cannot reach. Everything else takes the general path, each step
  // as in PyTorch (spec §3), whose cache path is inlined into malloc_general()/free_general() and
  // whose device, event and capture work is out of line.
  void choose_path();  // sets plain_ and starts an epoch; called after every change of what it depends on
  // Mallocs and frees so far (since the last reset_accumulated_stats): a malloc raises allocation's
  // current, a free lowers it and raises its freed.
  std::int64_t operations() const {
    const PooledStat& a = hot_.allocation;
    return a.pool[0].current + a.pool[1].current + 2 * (a.pool[0].freed + a.pool[1].freed) - a.pool[0].base -
           a.pool[1].base;
  }
  // The fast malloc's shared steps: a cached block split in two (inactive_split counts the
  // remainder unless the block was already a split), and the block handed out (the peaks left for
  // settle_peaks()). Always inlined: the fast path's three tails stay frameless.
  [[gnu::always_inline]] void count_split(bool small, bool already_split, Bytes size, Bytes remaining) {
    if (already_split) {
      hot_.inactive_split_bytes.decrease(small, static_cast<std::int64_t>(size));
    } else {
      hot_.inactive_split_bytes.increase(small, static_cast<std::int64_t>(remaining));
      hot_.inactive_split.increase(small, 1);
    }
  }
  [[gnu::always_inline]] Block* hand_out(Block* block, Bytes requested, Bytes size, bool small) {
    block->allocated = true;
    block->requested_size = requested;
    hot_.allocation.raise(small, 1);
    hot_.allocated_bytes.raise(small, static_cast<std::int64_t>(size));
    hot_.requested_bytes.raise(small, static_cast<std::int64_t>(requested));
    peaks_pending_ = true;
    return block;
  }
  Block* malloc_general(Bytes requested, StreamId stream);
  Block* malloc_whole(BlockSet& set, Block* found, Bytes requested, bool small);
  Block* malloc_moving(Bytes requested, Bytes size, Block* found);
  Block* malloc_miss(Bytes requested, Bytes size, StreamId stream, BlockPool& pool);
  void free_general(Block* block);
  Block* malloc_uncached(AllocParams& p);
  Block* oversize_request(Bytes requested);
  void free_with_stream_uses(Block* block);
  void keep_active_apart();
  BlockPool& get_pool(Bytes size, StreamId stream);
  bool get_free_block(AllocParams& p);
  Block* find_free_block(BlockSet& set, Bytes size) const;
  bool alloc_block(AllocParams& p, bool is_retry);
  bool release_available_cached_blocks(const AllocParams& p);
  bool release_cached_blocks();
  void garbage_collect_cached_blocks();
  bool should_split(const Block& block, Bytes size) const;
  Block* alloc_found_block(AllocParams& p, bool split_remainder);
  void report_oom(const AllocParams& p);

  // free path
  void release_allocation(Block* block);
  void free_block(Block* block);
  Bytes try_merge_blocks(Block* dst, Block* src, BlockPool& pool, BlockSet& set, Block** slot = nullptr);
  void insert_events(Block* block);
  void process_events();
  void synchronize_and_free_events();

  // segments
  void release_block(Block* block);
  void release_blocks(BlockPool& pool);
  Block* try_allocate_expandable_block(AllocParams& p);
  Block* find_expandable_block(StreamId stream, BlockPool& pool, Bytes size);
  bool map_block(Block* to_map, Bytes size);
  void unmap_block(Block* block);
  void release_expandable_segment(Block* block);
  void destroy_expandable_segment(Block* block);  // without the private pool's count

  bool gc_enabled() const { return device_.has_memory_fraction() && config_.garbage_collection_threshold > 0.0; }
  bool expandable_for(const BlockPool& pool) const;
  void trace(TraceAction action, Address addr, Bytes size, StreamId stream,
             std::optional<Bytes> device_free = std::nullopt);
  std::vector<const Block*> all_blocks() const;
  void after_operation() const {
    if (check_each_operation_) [[unlikely]]
      check_invariants();
  }
  template <class F>
  void for_each_pool(F&& f) const;

  device::Device& device_;
  AllocatorConfig config_;
  bool divisions_configured_ = false;  // any roundup_power2_divisions > 1 (cached for the hot path)
  mutable AllocatorStats stats_;  // scalar statistics; array ones are materialised from hot_
  mutable PooledStats hot_;       // array statistics, per pool (the hot path updates these)
  // allocation, allocated_bytes and requested_bytes rise on malloc only and fall on free only: the
  // fast malloc raises their current values and leaves the peaks to settle_peaks(), which folds them
  // before anything lowers one of them or reads a peak (a run of mallocs only rises, so its last
  // state holds every peak of the run).
  mutable bool peaks_pending_ = false;
  void settle_peaks() const {
    if (peaks_pending_) fold_peaks();
  }
  void fold_peaks() const;
  // A block is active (PyTorch's active/active_bytes) from its malloc until its free completes; with
  // no stream events those are the allocation's own bounds, so hot_.active and hot_.active_bytes are
  // left untouched and read as hot_.allocation / hot_.allocated_bytes, current, peak and totals alike,
  // until the first free that waits for an event (record_stream, a recorded free_requested, a
  // replay's pending block) copies them and keeps them apart from then on.
  bool active_apart_ = false;
  BlockArena arena_;
  BlockPool large_blocks_{false};
  BlockPool small_blocks_{true};
  std::map<PoolId, std::unique_ptr<PrivatePool>> graph_pools_;
  std::set<PoolId> graph_pools_freeable_;
  std::vector<std::pair<PoolId, StreamId>> captures_underway_;
  std::vector<std::unique_ptr<ExpandableSegment>> expandable_segments_;
  std::vector<Block*> pending_events_;                    // one entry per outstanding event
  std::vector<Block*> needs_events_deferred_until_no_capture_;
  Bytes total_allocated_memory_ = 0;  // all reserved bytes (cudaMalloc + mapped pages), every pool
  std::optional<OomInfo> last_oom_;
  // state_id(): the epoch, raised by every change of state other than a malloc or a free, and the
  // operations that closed runs took back.
  std::uint64_t epoch_ = 0;
  std::int64_t operations_offset_ = 0;
  // The closed run ended or repeated last, while the state is still the one it left: repeating it
  // again needs none of its requested-size writes (they are already there).
  const ClosedRun* last_closed_run_ = nullptr;
  StateId last_closed_state_;
  struct WrittenBlock {
    Address ptr, end;  // the block's range
    const Block* block;
    bool written;
  };
  std::vector<WrittenBlock> written_scratch_;  // end_run's free blocks (capacity kept between runs)
  // fragmentation() of the state `fragmentation_of_` (plain configuration only): the server asks
  // after every step, and most steps leave the state as they found it.
  mutable std::optional<StateId> fragmentation_of_;
  mutable Fragmentation fragmentation_;

  bool recording_ = false;
  std::size_t max_entries_ = 0;
  std::vector<TraceEvent> ring_;
  std::size_t ring_next_ = 0;  // where the next entry goes once the ring is full
  std::int64_t clock_us_ = 0;
  bool check_each_operation_ = false;
  // The plain configuration, where the fast paths hold: default sizing rules (no roundup divisions,
  // no max_split_size, no GC threshold), no expandable segments (configured or left over), no
  // history recording, no per-operation check, no capture underway or deferred events, and active
  // still equal to allocation (no free has waited for a stream event).
  bool plain_ = false;
};

}  // namespace headroom::alloc
