// Whole-state views of the caching allocator: snapshot export, fragmentation, the invariant checker
// and seeding a replay's start state. Only fragmentation() runs often (once per serving step).
#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/allocator/caching_allocator.hpp"

namespace headroom::alloc {

namespace {
inline std::int64_t i64(Bytes b) { return static_cast<std::int64_t>(b); }
bool is_free(const Block& b) { return !b.allocated && b.event_count == 0 && b.stream_uses.empty(); }
}  // namespace

std::vector<const Block*> CachingAllocator::all_blocks() const {
  std::vector<const Block*> out;
  arena_.for_each_live([&](const Block* b) { out.push_back(b); });
  std::sort(out.begin(), out.end(), [](const Block* a, const Block* b) { return a->ptr < b->ptr; });
  return out;
}

template <class F>
void CachingAllocator::for_each_pool(F&& f) const {
  f(large_blocks_);
  f(small_blocks_);
  for (const auto& [id, pp] : graph_pools_) {
    f(pp->large);
    f(pp->small);
  }
}

Fragmentation CachingAllocator::fragmentation() const {
  if (plain_ && fragmentation_of_ == state_id()) return fragmentation_;
  Fragmentation fr;
  fr.reserved = reserved_bytes();
  fr.allocated = allocated_bytes();
  fr.reserved_unallocated = fr.reserved >= fr.allocated ? fr.reserved - fr.allocated : 0;
  for_each_pool([&](const BlockPool& pool) {
    // Each stream's set is ordered by size: its last block is its largest (the server asks after
    // every step; a walk over the blocks was linear).
    for (const auto& s : pool.by_stream) {
      fr.free_blocks += static_cast<std::int64_t>(s->blocks.size());
      if (!s->blocks.empty()) fr.largest_free_block = std::max(fr.largest_free_block, s->blocks.rbegin()->size);
    }
  });
  if (plain_) fragmentation_of_ = state_id(), fragmentation_ = fr;
  return fr;
}

std::vector<SnapshotSegment> CachingAllocator::segments() const {
  std::vector<SnapshotSegment> segments;
  std::map<const PrivatePool*, PoolId> pool_ids;
  for (const auto& [id, pp] : graph_pools_) pool_ids[pp.get()] = id;
  for (const Block* head : all_blocks()) {
    // One segment per contiguous mapped range (expandable segments may have several).
    if (!head->mapped || (head->prev && head->prev->mapped)) continue;
    SnapshotSegment seg;
    seg.device = device_.spec().index;
    seg.address = head->ptr;
    seg.stream = head->stream;
    seg.is_large = !head->pool->is_small;
    seg.is_expandable = head->expandable != nullptr;
    if (auto it = pool_ids.find(head->pool->owner_private_pool); it != pool_ids.end()) {
      seg.pool_id = {static_cast<std::int64_t>(it->second.first), static_cast<std::int64_t>(it->second.second)};
    }
    for (const Block* b = head; b && b->mapped; b = b->next) {
      SnapshotBlock sb;
      sb.address = b->ptr;
      sb.size = b->size;
      sb.requested_size = b->requested_size;
      sb.state = b->allocated ? BlockState::ActiveAllocated
                              : (b->active() ? BlockState::ActivePendingFree : BlockState::Inactive);
      seg.total_size += b->size;
      if (b->allocated) seg.allocated_size += b->size;
      if (b->active()) {
        seg.active_size += b->size;
        seg.requested_size += b->requested_size;
      }
      seg.blocks.push_back(sb);
    }
    segments.push_back(std::move(seg));
  }
  return segments;
}

Snapshot CachingAllocator::snapshot() const {
  Snapshot snap;
  snap.segments = segments();
  snap.device_traces.push_back(history());
  AllocatorSettingsRecord& s = snap.allocator_settings;
  s.present = true;
  s.alloc_conf = config_.text;
  s.max_split_size = config_.max_split_limited() ? i64(config_.max_split_size) : -1;
  s.garbage_collection_threshold = config_.garbage_collection_threshold;
  s.expandable_segments = config_.expandable_segments;
  for (std::size_t i = 0; i < config_.roundup_power2_divisions.size(); ++i)
    s.roundup_power2_divisions[std::to_string(Bytes{1} << i)] = static_cast<std::int64_t>(config_.roundup_power2_divisions[i]);
  return snap;
}

void CachingAllocator::check_invariants() const {
  auto fail = [](const std::string& what) { throw std::logic_error("allocator invariant broken: " + what); };
  std::vector<const Block*> blocks = all_blocks();
  AllocatorStats expect;
  Bytes reserved_total = 0;
  Address last_end = 0;
  std::size_t in_free_sets = 0, in_unmapped_sets = 0;
  for (const Block* b : blocks) {
    if (b->size == 0) fail(fmt::format("block {:#x} has size 0", b->ptr));
    if (b->next && b->next->prev != b) fail(fmt::format("block {:#x}: next->prev does not point back", b->ptr));
    if (b->prev && b->prev->next != b) fail(fmt::format("block {:#x}: prev->next does not point back", b->ptr));
    if (b->next && b->ptr + b->size != b->next->ptr)
      fail(fmt::format("block {:#x}+{} does not end where its next block {:#x} starts", b->ptr, b->size, b->next->ptr));
    if (b->next && (b->next->stream != b->stream || b->next->pool != b->pool || b->next->expandable != b->expandable))
      fail(fmt::format("block {:#x}: neighbours of one segment differ in stream, pool or kind", b->ptr));
    if (!b->mapped) {
      if (b->allocated || !is_free(*b)) fail(fmt::format("unmapped block {:#x} is in use", b->ptr));
      ++in_unmapped_sets;
      if (!b->hook.is_linked()) fail(fmt::format("unmapped block {:#x} is not in its pool's unmapped set", b->ptr));
      continue;
    }
    if (b->ptr < last_end) fail(fmt::format("block {:#x} overlaps the block before it", b->ptr));
    last_end = b->ptr + b->size;
    const bool small = b->pool->is_small;
    if (is_free(*b)) {
      ++in_free_sets;
      if (!b->hook.is_linked()) fail(fmt::format("free block {:#x} is not in its pool's free set", b->ptr));
      if (!b->expandable && b->next && is_free(*b->next) && b->next->mapped)
        fail(fmt::format("free blocks {:#x} and {:#x} are adjacent but not merged", b->ptr, b->next->ptr));
      if (!b->expandable && b->is_split()) {
        AllocatorStats::both(expect.inactive_split, small, [](Stat& s) { s.increase(1); });
        AllocatorStats::both(expect.inactive_split_bytes, small, [&](Stat& s) { s.increase(i64(b->size)); });
      }
    } else if (b->hook.is_linked()) {
      fail(fmt::format("block {:#x} is in use but sits in a free set", b->ptr));
    }
    if (b->allocated) {
      AllocatorStats::both(expect.allocation, small, [](Stat& s) { s.increase(1); });
      AllocatorStats::both(expect.allocated_bytes, small, [&](Stat& s) { s.increase(i64(b->size)); });
    }
    if (b->active()) {
      AllocatorStats::both(expect.active, small, [](Stat& s) { s.increase(1); });
      AllocatorStats::both(expect.active_bytes, small, [&](Stat& s) { s.increase(i64(b->size)); });
      AllocatorStats::both(expect.requested_bytes, small, [&](Stat& s) { s.increase(i64(b->requested_size)); });
    }
    reserved_total += b->size;
    AllocatorStats::both(expect.reserved_bytes, small, [&](Stat& s) { s.increase(i64(b->size)); });
    if (!b->prev && !b->expandable)
      AllocatorStats::both(expect.segment, small, [](Stat& s) { s.increase(1); });
  }
  std::size_t set_sizes = 0, unmapped_sizes = 0;
  for_each_pool([&](const BlockPool& pool) {
    set_sizes += pool.free_count();
    unmapped_sizes += pool.unmapped.size();
    for (const auto& s : pool.by_stream) {
      for (const Block& b : s->blocks) {
        if (b.pool != &pool) fail(fmt::format("block {:#x} sits in another pool's free set", b.ptr));
        if (b.stream != s->stream) fail(fmt::format("block {:#x} sits in another stream's free set", b.ptr));
      }
    }
  });
  if (set_sizes != in_free_sets)
    fail(fmt::format("free sets hold {} blocks but {} blocks are free", set_sizes, in_free_sets));
  if (unmapped_sizes != in_unmapped_sets)
    fail(fmt::format("unmapped sets hold {} blocks but {} blocks are unmapped", unmapped_sizes, in_unmapped_sets));
  if (reserved_total != total_allocated_memory_)
    fail(fmt::format("reserved bytes {} != sum of mapped blocks {}", total_allocated_memory_, reserved_total));
  auto check_array = [&](const char* name, const StatArray& have, const StatArray& want) {
    for (int p = 0; p < 3; ++p)
      if (have[p].current != want[p].current)
        fail(fmt::format("{}[{}].current is {} but recomputes to {}", name, p, have[p].current, want[p].current));
  };
  const AllocatorStats& have = stats();
  check_array("allocation", have.allocation, expect.allocation);
  check_array("allocated_bytes", have.allocated_bytes, expect.allocated_bytes);
  check_array("active", have.active, expect.active);
  check_array("active_bytes", have.active_bytes, expect.active_bytes);
  check_array("requested_bytes", have.requested_bytes, expect.requested_bytes);
  check_array("reserved_bytes", have.reserved_bytes, expect.reserved_bytes);
  check_array("segment", have.segment, expect.segment);
  check_array("inactive_split", have.inactive_split, expect.inactive_split);
  check_array("inactive_split_bytes", have.inactive_split_bytes, expect.inactive_split_bytes);
  for (const StatArray* a : {&have.allocated_bytes, &have.reserved_bytes, &have.active_bytes})
    for (const Stat& s : *a)
      if (s.peak < s.current) fail("a peak is below its current value");
}

std::vector<Block*> CachingAllocator::seed_segment(Address address, StreamId stream, bool small_pool,
                                                   const std::vector<SeedBlock>& blocks) {
  ++epoch_;
  BlockPool& pool = small_pool ? small_blocks_ : large_blocks_;
  Bytes total = 0;
  for (const SeedBlock& sb : blocks) total += sb.size;
  if (!device_.adopt_range(address, total))
    throw std::runtime_error(fmt::format("segment {:#x} ({} bytes) does not fit on the device", address, total));
  total_allocated_memory_ += total;
  hot_.segment.increase(small_pool, 1);
  hot_.reserved_bytes.increase(small_pool, i64(total));
  if (total >= config_.max_split_size) stats_.oversize_segments.increase(1);
  for (const SeedBlock& sb : blocks)
    if (sb.pending_free) keep_active_apart();  // a freed block still active: the two counts part
  std::vector<Block*> made;
  Block* prev = nullptr;
  Address at = address;
  for (const SeedBlock& sb : blocks) {
    Block* b = arena_.make();
    b->ptr = at;
    b->size = sb.size;
    b->requested_size = sb.requested_size;
    b->stream = stream;
    b->pool = &pool;
    b->prev = prev;
    if (prev) prev->next = b;
    prev = b;
    at += sb.size;
    made.push_back(b);
  }
  for (std::size_t i = 0; i < made.size(); ++i) {
    Block* b = made[i];
    const SeedBlock& sb = blocks[i];
    if (sb.allocated || sb.pending_free) {
      b->allocated = sb.allocated;
      if (active_apart_) {
        hot_.active.increase(small_pool, 1);
        hot_.active_bytes.increase(small_pool, i64(b->size));
      }
      hot_.requested_bytes.increase(small_pool, i64(b->requested_size));
      if (sb.allocated) {
        hot_.allocation.increase(small_pool, 1);
        hot_.allocated_bytes.increase(small_pool, i64(b->size));
        if (b->size >= config_.max_split_size) stats_.oversize_allocations.increase(1);
      } else {
        b->event_count = 1;
        pending_events_.push_back(b);
      }
    } else {
      pool.insert(*b);
      if (b->is_split()) {
        hot_.inactive_split.increase(small_pool, 1);
        hot_.inactive_split_bytes.increase(small_pool, i64(b->size));
      }
    }
  }
  after_operation();
  return made;
}

}  // namespace headroom::alloc
