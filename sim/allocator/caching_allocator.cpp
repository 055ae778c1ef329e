#include "sim/allocator/caching_allocator.hpp"

#include <algorithm>
#include <cassert>

#include "sim/allocator/size_rules.hpp"

namespace headroom::alloc {

namespace {
constexpr Bytes kOneExabyte = Bytes{1} << 60;  // requests >= 1 EB fail up front (spec §3 step 9)
inline std::int64_t i64(Bytes b) { return static_cast<std::int64_t>(b); }
}  // namespace

// The steps of a malloc or free served from the cache: inlined into malloc()/free() so that the
// common path is one call with no spills between the rules (they stay separate functions to read).
#define HEADROOM_CACHE_PATH [[gnu::always_inline]] inline

CachingAllocator::CachingAllocator(device::Device& device, AllocatorConfig config)
    : device_(device), config_(std::move(config)), divisions_configured_(config_.rounds_to_divisions()) {
  stats_.max_split_size = config_.max_split_limited() ? i64(config_.max_split_size) : -1;
  if (config_.per_process_memory_fraction) device_.set_per_process_memory_fraction(*config_.per_process_memory_fraction);
  choose_path();
}

CachingAllocator::~CachingAllocator() {
  // Unlink every intrusive hook before the pools go away.
  large_blocks_.clear();
  small_blocks_.clear();
  for (auto& [id, pp] : graph_pools_) {
    pp->large.clear();
    pp->small.clear();
  }
}

void CachingAllocator::set_config(AllocatorConfig config) {
  config_ = std::move(config);
  divisions_configured_ = config_.rounds_to_divisions();
  if (config_.per_process_memory_fraction) device_.set_per_process_memory_fraction(*config_.per_process_memory_fraction);
  choose_path();
  after_operation();
}

void CachingAllocator::choose_path() {
  ++epoch_;
  plain_ = !divisions_configured_ && !config_.max_split_limited() && config_.garbage_collection_threshold == 0.0 &&
           !config_.expandable_segments && expandable_segments_.empty() && !recording_ && !check_each_operation_ &&
           captures_underway_.empty() && needs_events_deferred_until_no_capture_.empty() && !active_apart_;
}

void CachingAllocator::fold_peaks() const {
  hot_.allocation.fold_peak();
  hot_.allocated_bytes.fold_peak();
  hot_.requested_bytes.fold_peak();
  peaks_pending_ = false;
}

bool CachingAllocator::expandable_for(const BlockPool&) const {
  // Newest PyTorch also uses expandable segments for private (graph) pools (spec §7 rows 14-15).
  return config_.expandable_segments;
}

// ---------------------------------------------------------------------------------------------
// malloc (spec §3)

Block* CachingAllocator::malloc(Bytes requested, StreamId stream) {
  assert(requested > 0 && "0-byte requests never reach the allocator");
  if (!plain_ || requested >= kOneExabyte) [[unlikely]]
    return malloc_general(requested, stream);
  // The fast path (plain configuration): round to 512 bytes, the default pool by size, the best fit
  // in the stream's free blocks, split when the remainder is worth keeping (spec §3 steps 1-3, 10).
  // No cached fit: the general path's device steps, from malloc_miss.
  const Bytes size = round_up(requested, kMinBlockSize);  // requested > 0: at least 512
  const bool small = is_small_request(size);
  BlockPool& pool = small ? small_blocks_ : large_blocks_;
  BlockSet* set = pool.free_blocks(stream);
  if (!set) [[unlikely]]
    return malloc_miss(requested, size, stream, pool);
  const BestFit fit = best_fit(*set, size);
  Block* found = fit.block;
  if (!found) [[unlikely]]
    return malloc_miss(requested, size, stream, pool);
  const Bytes remaining = found->size - size;
  // should_split without max_split_size or expandable segments. The low addresses are allocated; the
  // remainder (remaining, ptr + size) keeps its node when it still sorts after the node before it
  // (its key only moved down). Everything else (no split, a remainder that moves, an arena that must
  // grow) is malloc_whole's or malloc_moving's: this path calls nothing, so it needs no stack frame.
  const bool split = small ? remaining >= kMinBlockSize : remaining > kSmallSize;
  if (!split) [[unlikely]]
    return malloc_whole(*set, found, requested, small);
  const bool in_place = !fit.pred || fit.pred->size < remaining ||
                        (fit.pred->size == remaining && fit.pred->ptr < found->ptr + size);
  if (!in_place || !arena_.can_make()) [[unlikely]]
    return malloc_moving(requested, size, found);
  const bool already_split = found->is_split();
  Block* block = arena_.make();
  block->ptr = found->ptr;
  block->size = size;
  block->stream = stream;
  block->pool = &pool;
  block->prev = found->prev;
  if (block->prev) block->prev->next = block;
  block->next = found;
  found->prev = block;
  found->ptr += size;
  found->size = remaining;
  found->gc_count_base = pool.get_free_blocks_call_count;  // as a fresh insert would
  count_split(small, already_split, size, remaining);
  return hand_out(block, requested, size, small);
}

// The fast malloc's fit taken whole: it leaves its set.
[[gnu::noinline]] Block* CachingAllocator::malloc_whole(BlockSet& set, Block* found, Bytes requested, bool small) {
  set.erase(set.iterator_to(*found));
  if (found->is_split()) {
    hot_.inactive_split_bytes.decrease(small, i64(found->size));
    hot_.inactive_split.decrease(small, 1);
  }
  return hand_out(found, requested, found->size, small);
}

// The fast malloc's fit split with a remainder that sorts before its old predecessor (erased and
// re-inserted), or with an arena that must grow.
[[gnu::noinline]] Block* CachingAllocator::malloc_moving(Bytes requested, Bytes size, Block* found) {
  BlockPool& pool = *found->pool;
  const bool small = pool.is_small;
  BlockSet& set = *pool.free_blocks(found->stream);
  const Bytes remaining = found->size - size;
  const bool already_split = found->is_split();
  set.erase(set.iterator_to(*found));
  Block* block = arena_.make();
  block->ptr = found->ptr;
  block->size = size;
  block->stream = found->stream;
  block->pool = &pool;
  block->prev = found->prev;
  if (block->prev) block->prev->next = block;
  count_split(small, already_split, size, remaining);
  block->next = found;
  found->prev = block;
  found->ptr += size;
  found->size = remaining;
  pool.insert(set, *found);
  return hand_out(block, requested, size, small);
}

[[gnu::noinline]] Block* CachingAllocator::malloc_miss(Bytes requested, Bytes size, StreamId stream, BlockPool& pool) {
  AllocParams p;
  p.requested = requested;
  p.size = size;
  p.stream = stream;
  p.pool = &pool;
  return malloc_uncached(p);
}

// The general path: every configuration, each rule as in PyTorch.
[[gnu::noinline]] Block* CachingAllocator::malloc_general(Bytes requested, StreamId stream) {
  // The cache path: round, pick the pool, best fit, split. Everything else is out of line.
  if (!needs_events_deferred_until_no_capture_.empty() && captures_underway_.empty()) [[unlikely]]
    process_events();
  if (requested >= kOneExabyte) [[unlikely]]
    return oversize_request(requested);
  AllocParams p;
  p.requested = requested;
  p.size = round_size(requested, config_, divisions_configured_);
  p.stream = stream;
  p.pool = &get_pool(p.size, stream);
  if (!get_free_block(p)) [[unlikely]]
    return malloc_uncached(p);
  Block* block = alloc_found_block(p, should_split(*p.block, p.size));
  after_operation();
  return block;
}

// Steps 4-9 of spec §3: no cached block fits, so the GC, the driver, the releases and retries, OOM.
[[gnu::noinline]] Block* CachingAllocator::malloc_uncached(AllocParams& p) {
  p.alloc_size = segment_size_for(p.size, config_);
  if (gc_enabled()) garbage_collect_cached_blocks();
  bool found = alloc_block(p, false) ||
               (release_available_cached_blocks(p) && alloc_block(p, false)) ||
               (captures_underway_.empty() && release_cached_blocks() && alloc_block(p, true));
  if (!found) {
    report_oom(p);
    after_operation();
    return nullptr;
  }
  Block* block = alloc_found_block(p, should_split(*p.block, p.size));
  after_operation();
  return block;
}

[[gnu::noinline]] Block* CachingAllocator::oversize_request(Bytes requested) {
  OomInfo info;
  info.device = device_.spec().index;
  info.requested = requested;
  info.more_than_1eb = true;
  last_oom_ = info;
  return nullptr;
}

HEADROOM_CACHE_PATH BlockPool& CachingAllocator::get_pool(Bytes size, StreamId stream) {
  if (!captures_underway_.empty()) [[unlikely]] {
    for (const auto& [id, capture_stream] : captures_underway_) {
      if (capture_stream == stream) {
        PrivatePool& pp = *graph_pools_.at(id);
        return size <= kSmallSize ? pp.small : pp.large;
      }
    }
  }
  return size <= kSmallSize ? small_blocks_ : large_blocks_;
}

HEADROOM_CACHE_PATH bool CachingAllocator::get_free_block(AllocParams& p) {
  BlockPool& pool = *p.pool;
  if (gc_enabled()) ++pool.get_free_blocks_call_count;  // the GC's notion of block age
  BlockSet* set = pool.free_blocks(p.stream);
  if (!set) return false;
  Block* b = find_free_block(*set, p.size);
  if (!b) return false;
  p.set = set;
  p.block = b;
  p.block_in_free_set = true;  // unlinked (or re-keyed in place) by alloc_found_block
  return true;
}

HEADROOM_CACHE_PATH Block* CachingAllocator::find_free_block(BlockSet& set, Bytes size) const {
  auto it = set.lower_bound(FitKey{size}, FitKeyCompare{});
  if (it == set.end()) return nullptr;

  if (it->expandable) [[unlikely]] {
    if (config_.expandable_segments) {
      // A free block in front of an unmapped tail can grow: rank it by what it can expand to.
      auto expandable_size = [](const Block& b) {
        return b.size + (b.next && !b.next->mapped ? b.next->size : 0);
      };
      auto next = std::next(it);
      while (it->expandable && next != set.end() &&
             expandable_size(*next) < expandable_size(*it)) {
        it = next++;
      }
    } else {
      // Expandable segments were turned off after some were made: use ordinary blocks only.
      do {
        ++it;
      } while (it != set.end() && it->expandable);
      if (it == set.end()) return nullptr;
    }
  }
  // Oversize blocks (>= max_split_size) serve only requests that are themselves oversize, and then
  // only within the max_non_split_rounding slack (the "20 MiB rule").
  if (size < config_.max_split_size && it->size >= config_.max_split_size) return nullptr;
  if (size >= config_.max_split_size && it->size >= size + config_.max_non_split_rounding_size) return nullptr;
  return &*it;
}

bool CachingAllocator::would_reuse_cached_block(Bytes requested, StreamId stream) {
  Bytes size = round_size(requested, config_, divisions_configured_);
  BlockSet* set = get_pool(size, stream).free_blocks(stream);
  return set && find_free_block(*set, size) != nullptr;
}

bool CachingAllocator::alloc_block(AllocParams& p, bool is_retry) {
  Bytes size = p.alloc_size;
  if (is_retry) stats_.num_alloc_retries += 1;
  if (device_.has_memory_fraction() && total_allocated_memory_ + size > device_.allowed_maximum()) return false;
  if (expandable_for(*p.pool)) {
    p.block = try_allocate_expandable_block(p);
    if (p.block && p.pool->owner_private_pool) p.pool->owner_private_pool->cuda_malloc_count++;
    return p.block != nullptr;
  }
  std::optional<Address> ptr = device_.cuda_malloc(size);
  if (!ptr) return false;
  if (p.pool->owner_private_pool) p.pool->owner_private_pool->cuda_malloc_count++;
  total_allocated_memory_ += size;
  Block* b = arena_.make();
  b->ptr = *ptr;
  b->size = size;
  b->stream = p.stream;
  b->pool = p.pool;
  p.block = b;
  hot_.segment.increase(p.pool->is_small, 1);
  hot_.reserved_bytes.increase(p.pool->is_small, i64(size));
  if (size >= config_.max_split_size) stats_.oversize_segments.increase(1);
  stats_.num_device_alloc++;
  trace(TraceAction::SegmentAlloc, b->ptr, size, p.stream);
  return true;
}

// Step 7: with max_split_size set, free cached oversize blocks (smallest sufficient one, else the
// largest ones downwards) before trying the driver again. Freed blocks stay freed even on failure.
bool CachingAllocator::release_available_cached_blocks(const AllocParams& p) {
  if (!config_.max_split_limited()) return false;
  BlockSet* set = p.pool->free_blocks(p.stream);
  if (!set) return false;
  Bytes key_size = std::max(p.size, config_.max_split_size);
  auto it = set->lower_bound(SizeKey{key_size, 0}, SizeKeyCompare{});
  if (it == set->end() || it->expandable) {
    if (it == set->begin()) return false;
    Bytes released = 0;
    --it;  // now on the largest block of a smaller key
    while (released < key_size && it->size >= config_.max_split_size) {
      auto cur = it;
      bool is_first = cur == set->begin();
      if (!is_first) --it;
      if (!cur->expandable && !cur->is_split()) {
        released += cur->size;
        release_block(&*cur);
      }
      if (is_first) break;
    }
    return released >= key_size;
  }
  if (it->is_split()) return false;  // only whole segments can be cudaFree'd
  release_block(&*it);
  return true;
}

// Step 8 and empty_cache(): sync events, then cudaFree every whole free segment and unmap every
// free page of expandable segments; then the same for freeable private pools.
bool CachingAllocator::release_cached_blocks() {
  synchronize_and_free_events();
  release_blocks(large_blocks_);
  release_blocks(small_blocks_);
  for (auto it = graph_pools_freeable_.begin(); it != graph_pools_freeable_.end();) {
    PrivatePool& pp = *graph_pools_.at(*it);
    release_blocks(pp.small);
    release_blocks(pp.large);
    if (pp.cuda_malloc_count == 0) {
      // A segment made for this pool whose first map failed (an OOM during capture) was never
      // counted and holds no memory; PyTorch leaves it behind with the freed pool. It goes with the
      // pool here, so that no block points into a pool that no longer exists.
      for (BlockPool* pool : {&pp.small, &pp.large}) {
        std::vector<Block*> never_mapped;
        for (Block& b : pool->unmapped)
          if (!b.prev && !b.next) never_mapped.push_back(&b);
        for (Block* b : never_mapped) destroy_expandable_segment(b);
      }
      graph_pools_.erase(*it);
      it = graph_pools_freeable_.erase(it);
    } else {
      ++it;
    }
  }
  return true;
}

void CachingAllocator::release_blocks(BlockPool& pool) {
  std::vector<Block*> to_unmap;
  pool.for_each_free([&](Block& b) {
    if (b.expandable) {
      to_unmap.push_back(&b);  // unmapping mutates the set: collect first
    } else if (!b.prev && !b.next) {
      release_block(&b);
    }
  });
  for (Block* b : to_unmap) {
    unmap_block(b);
    if (!b->prev && !b->next) release_expandable_segment(b);
  }
}

void CachingAllocator::release_block(Block* block) {
  assert(!block->expandable);
  stats_.num_device_free++;
  trace(TraceAction::SegmentFree, block->ptr, block->size, block->stream);
  device_.cuda_free(block->ptr, block->size);
  total_allocated_memory_ -= block->size;
  BlockPool& pool = *block->pool;
  if (pool.owner_private_pool) pool.owner_private_pool->cuda_malloc_count--;
  hot_.segment.decrease(pool.is_small, 1);
  hot_.reserved_bytes.decrease(pool.is_small, i64(block->size));
  if (block->size >= config_.max_split_size) stats_.oversize_segments.decrease(1);
  pool.erase(*block);
  arena_.recycle(block);
}

// Step 4: with a memory fraction and a GC threshold, free old unsplit cached blocks of the default
// large pool until reserved memory is back under threshold x allowed.
void CachingAllocator::garbage_collect_cached_blocks() {
  Bytes gc_threshold =
      static_cast<Bytes>(config_.garbage_collection_threshold * static_cast<double>(device_.allowed_maximum()));
  if (total_allocated_memory_ <= gc_threshold) return;
  Bytes target = total_allocated_memory_ - gc_threshold;
  Bytes reclaimed = 0;
  auto age = [&](const Block& b) { return large_blocks_.get_free_blocks_call_count - b.gc_count_base; };
  std::int64_t total_age = 0;
  std::int64_t freeable = 0;
  large_blocks_.for_each_free([&](const Block& b) {
    if (!b.is_split()) {
      total_age += age(b);
      ++freeable;
    }
  });
  if (freeable == 0) return;
  bool freed = true;
  while (reclaimed < target && freed && freeable > 0) {
    double threshold = static_cast<double>(total_age) / static_cast<double>(freeable);
    freed = false;
    large_blocks_.for_each_free([&](Block& b) {
      if (!b.is_split() && !b.expandable && static_cast<double>(age(b)) >= threshold) {
        freed = true;
        reclaimed += b.size;
        total_age -= age(b);
        --freeable;
        release_block(&b);
      }
    });
  }
}

HEADROOM_CACHE_PATH bool CachingAllocator::should_split(const Block& block, Bytes size) const {
  Bytes remaining = block.size - size;
  if (block.pool->is_small || config_.expandable_segments) return remaining >= kMinBlockSize;
  return size < config_.max_split_size && remaining > kSmallSize;
}

HEADROOM_CACHE_PATH Block* CachingAllocator::alloc_found_block(AllocParams& p, bool split_remainder) {
  Block* block = p.block;
  BlockPool& pool = *p.pool;
  const bool small = pool.is_small;
  const bool already_split = block->is_split();
  if (split_remainder) {
    // The allocation takes the low addresses; the remainder goes back to the free set.
    Block* remaining = block;
    bool rekey_in_place = false;
    if (p.block_in_free_set) {
      // The remainder's key (size - s, ptr + s) only moves down; when it still sorts after
      // its predecessor the node keeps its place and no erase/insert is needed.
      auto it = p.set->iterator_to(*remaining);
      rekey_in_place = true;
      if (it != p.set->begin()) {
        const Block& pred = *std::prev(it);
        rekey_in_place = pred.size < remaining->size - p.size ||
                         (pred.size == remaining->size - p.size && pred.ptr < remaining->ptr + p.size);
      }
      if (!rekey_in_place) p.set->erase(it);
    }
    block = arena_.make();
    block->ptr = remaining->ptr;
    block->size = p.size;
    block->stream = p.stream;
    block->pool = &pool;
    block->expandable = remaining->expandable;
    block->prev = remaining->prev;
    if (block->prev) block->prev->next = block;
    block->next = remaining;
    remaining->prev = block;
    remaining->ptr += p.size;
    remaining->size -= p.size;
    if (rekey_in_place) {
      remaining->gc_count_base = pool.get_free_blocks_call_count;  // as a fresh insert would
    } else if (p.set) {
      pool.insert(*p.set, *remaining);
    } else {
      pool.insert(*remaining);
    }
    // inactive_split excludes expandable segments: their free pages can always be returned.
    if (!block->expandable) count_split(small, already_split, block->size, remaining->size);
  } else {
    if (p.block_in_free_set) p.set->erase(p.set->iterator_to(*block));
    if (already_split && !block->expandable) {
      hot_.inactive_split_bytes.decrease(small, i64(block->size));
      hot_.inactive_split.decrease(small, 1);
    }
  }
  block->allocated = true;
  block->requested_size = p.requested;
  if (recording_) [[unlikely]]
    trace(TraceAction::Alloc, block->ptr, p.requested, block->stream);
  const std::int64_t bsize = i64(block->size);
  hot_.allocation.increase(small, 1);
  hot_.allocated_bytes.increase(small, bsize);
  if (active_apart_) [[unlikely]] {
    hot_.active.increase(small, 1);
    hot_.active_bytes.increase(small, bsize);
  }
  hot_.requested_bytes.increase(small, i64(p.requested));
  if (block->size >= config_.max_split_size) stats_.oversize_allocations.increase(1);
  return block;
}

void CachingAllocator::report_oom(const AllocParams& p) {
  OomInfo info;
  info.device = device_.spec().index;
  info.stream = p.stream;
  info.requested = p.requested;
  info.rounded = p.size;
  info.alloc_size = p.alloc_size;
  info.total = device_.total();
  info.free = device_.free_bytes();
  if (device_.has_memory_fraction()) info.allowed = device_.allowed_maximum();
  info.allocated = allocated_bytes();
  info.reserved = reserved_bytes();
  for (const auto& [id, pp] : graph_pools_) {
    for (const BlockPool* pool : {&pp->large, &pp->small})
      pool->for_each_free([&](const Block& b) { info.private_pool_free += b.size; });
  }
  info.process_in_use = device_.used_bytes() + device_.spec().context_bytes;
  trace(TraceAction::Oom, 0, p.size, p.stream, info.free);
  stats_.num_ooms += 1;
  last_oom_ = info;
  ++epoch_;  // the retry may have released segments
}

// ---------------------------------------------------------------------------------------------
// free

// The free_requested half of a free: allocated bytes drop at once; the block stays active.
HEADROOM_CACHE_PATH void CachingAllocator::release_allocation(Block* block) {
  settle_peaks();
  block->allocated = false;
  const bool small = block->pool->is_small;
  hot_.allocation.decrease(small, 1);
  hot_.allocated_bytes.decrease(small, i64(block->size));
  if (recording_) [[unlikely]]
    trace(TraceAction::FreeRequested, block->ptr, block->requested_size, block->stream);
  if (block->size >= config_.max_split_size) stats_.oversize_allocations.decrease(1);
}

void CachingAllocator::free(Block* block) {
  if (!plain_ || !block->stream_uses.empty()) [[unlikely]]
    return free_general(block);
  // The fast path (plain configuration, no stream uses): the allocation ends and the block is cached
  // at once, merged with free neighbours (spec §3 free_block); every block is mapped and ordinary.
  // The pending peaks are folded here, not by a call to fold_peaks().
  if (peaks_pending_) {
    hot_.allocation.fold_peak();
    hot_.allocated_bytes.fold_peak();
    hot_.requested_bytes.fold_peak();
    peaks_pending_ = false;
  }
  BlockPool& pool = *block->pool;
  const bool small = pool.is_small;
  const Bytes original_size = block->size;
  block->allocated = false;
  hot_.allocation.decrease(small, 1);
  hot_.allocated_bytes.decrease(small, i64(original_size));
  hot_.requested_bytes.decrease(small, i64(block->requested_size));
  BlockSet& set = pool.free_blocks_or_make(block->stream);
  // A neighbour is cached when it sits in a free set (the invariant check_invariants() enforces).
  Block* prev = block->prev;
  Block* next = block->next;
  const bool merge_prev = prev && prev->hook.is_linked();
  const bool merge_next = next && next->hook.is_linked();
  if (!merge_prev && !merge_next) {
    block->gc_count_base = pool.get_free_blocks_call_count;
    set.insert_equal(*block);
    if (block->is_split()) {
      hot_.inactive_split_bytes.increase(small, i64(original_size));
      hot_.inactive_split.increase(small, 1);
    }
    return;
  }
  // The merged range lives on in a cached neighbour's Block, whose node stays where it is: the
  // merged key is larger than the neighbour's, so it still follows the neighbour's predecessor, and
  // when it also precedes the neighbour's successor no tree step is needed. The freed Block goes back
  // to the arena. The merged block carries the freed allocation's requested size, as PyTorch's
  // merge into the freed block does (its snapshots show it).
  Block* keep;
  Bytes subsumed;  // the merged neighbours' bytes
  if (merge_prev) {  // [prev block (next)]
    keep = prev;
    subsumed = prev->size;
    keep->size += original_size;
    Block* after = next;
    if (merge_next) {
      subsumed += next->size;
      keep->size += next->size;
      after = next->next;
      set.erase(set.iterator_to(*next));
      arena_.recycle(next);
    }
    keep->next = after;
    if (after) after->prev = keep;
  } else {  // [block next]
    keep = next;
    subsumed = next->size;
    keep->ptr = block->ptr;
    keep->size += original_size;
    keep->prev = block->prev;
    if (keep->prev) keep->prev->next = keep;
  }
  keep->requested_size = block->requested_size;
  keep->gc_count_base = pool.get_free_blocks_call_count;
  arena_.recycle(block);
  auto it = set.iterator_to(*keep);
  auto succ = std::next(it);
  if (succ != set.end() && !BySize{}(*keep, *succ)) [[unlikely]] {
    // Past its successor: by one position, the two trade places; further, erase and insert.
    auto after = std::next(succ);
    if (after == set.end() || BySize{}(*keep, *after)) {
      swap_places(set, *keep, *succ);
    } else {
      set.erase(it);
      set.insert_equal(*keep);
    }
  }
  // inactive_split: each merged neighbour was one (it had a neighbour); the block is one if split.
  if (keep->is_split()) {
    // +original_size bytes net: the block's own bytes joined the split free bytes.
    hot_.inactive_split_bytes.increase(small, i64(original_size));
    if (merge_prev && merge_next) hot_.inactive_split.decrease(small, 1);
  } else {
    hot_.inactive_split_bytes.decrease(small, i64(subsumed));
    hot_.inactive_split.decrease(small, std::int64_t{merge_prev} + std::int64_t{merge_next});
  }
}

[[gnu::noinline]] void CachingAllocator::free_general(Block* block) {
  if (!block->stream_uses.empty()) [[unlikely]]
    return free_with_stream_uses(block);
  release_allocation(block);
  free_block(block);
  after_operation();
}

[[gnu::noinline]] void CachingAllocator::free_with_stream_uses(Block* block) {
  keep_active_apart();  // the block stays active after its allocation ends
  release_allocation(block);
  if (!captures_underway_.empty()) {
    // Events recorded during capture cannot be queried: defer until no capture is underway.
    needs_events_deferred_until_no_capture_.push_back(block);
  } else {
    insert_events(block);
  }
  after_operation();
}

void CachingAllocator::keep_active_apart() {
  if (active_apart_) return;
  settle_peaks();
  hot_.active = hot_.allocation;
  hot_.active_bytes = hot_.allocated_bytes;
  active_apart_ = true;
  choose_path();
}

void CachingAllocator::free_requested(Block* block) {
  ++epoch_;
  // As free(), but the block waits for an event that only free_completed() ends.
  keep_active_apart();
  release_allocation(block);
  // That one event stands for all of the block's events: a recorded free_completed is written when
  // the last event of the streams that used it (record_stream, insert_events) has completed.
  block->stream_uses.clear();
  block->event_count += 1;
  pending_events_.push_back(block);  // a synchronize (empty_cache, OOM retry) completes it too
  after_operation();
}

void CachingAllocator::free_completed(Block* block) {
  ++epoch_;
  auto it = std::find(pending_events_.begin(), pending_events_.end(), block);
  if (it == pending_events_.end()) return;  // already completed by a synchronize
  pending_events_.erase(it);
  if (--block->event_count == 0 && block->stream_uses.empty()) free_block(block);
  after_operation();
}

void CachingAllocator::record_stream(Block* block, StreamId stream) {
  ++epoch_;
  if (stream == block->stream) return;  // uses on the allocating stream need no event
  if (std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) == block->stream_uses.end())
    block->stream_uses.push_back(stream);
  after_operation();
}

void CachingAllocator::insert_events(Block* block) {
  // One event per stream that used the block; the block stays active until all complete.
  for (std::size_t i = 0; i < block->stream_uses.size(); ++i) {
    block->event_count++;
    pending_events_.push_back(block);
  }
  block->stream_uses.clear();
}

void CachingAllocator::process_events() {
  // Blocks freed during a capture get their events now that no capture is underway. Events
  // themselves complete only at synchronize() (the simulator has no kernels to wait for).
  if (!needs_events_deferred_until_no_capture_.empty()) [[unlikely]] {
    for (Block* b : needs_events_deferred_until_no_capture_) insert_events(b);
    needs_events_deferred_until_no_capture_.clear();
    choose_path();
  }
}

void CachingAllocator::synchronize_and_free_events() {
  stats_.num_sync_all_streams += 1;
  synchronize();
}

void CachingAllocator::synchronize() {
  ++epoch_;
  process_events();
  std::vector<Block*> events;
  events.swap(pending_events_);
  for (Block* b : events) {
    if (--b->event_count == 0) free_block(b);
  }
  after_operation();
}

HEADROOM_CACHE_PATH void CachingAllocator::free_block(Block* block) {
  assert(!block->allocated && block->event_count == 0 && block->stream_uses.empty());
  settle_peaks();  // requested_bytes falls here
  if (recording_) [[unlikely]]
    trace(TraceAction::FreeCompleted, block->ptr, block->requested_size, block->stream);
  const Bytes original_size = block->size;
  const Bytes requested = block->requested_size;
  BlockPool& pool = *block->pool;
  BlockSet& set = pool.free_blocks_or_make(block->stream);
  std::int64_t net_inactive_blocks = 0;
  std::int64_t net_inactive_bytes = 0;
  Block* slot = nullptr;  // a merged neighbour whose place in the free set the block may take
  for (Block* candidate : {block->prev, block->next}) {
    Bytes subsumed = try_merge_blocks(block, candidate, pool, set, &slot);
    if (subsumed > 0) {
      net_inactive_blocks -= 1;
      net_inactive_bytes -= i64(subsumed);
    }
  }
  if (slot) {
    // The merged key is larger than the neighbour's, so it still follows the neighbour's
    // predecessor; if it also precedes the neighbour's successor, take its node in place.
    auto it = set.iterator_to(*slot);
    auto succ = std::next(it);
    if (succ == set.end() || BySize{}(*block, *succ)) {
      set.replace_node(it, *block);
      block->gc_count_base = pool.get_free_blocks_call_count;
    } else {
      set.erase(it);
      pool.insert(set, *block);
    }
    arena_.recycle(slot);
  } else {
    pool.insert(set, *block);
  }
  if (block->is_split()) {
    net_inactive_blocks += 1;
    net_inactive_bytes += i64(block->size);
  }
  const bool small = pool.is_small;
  // inactive_split excludes expandable segments: their free pages can always be returned.
  if (!block->expandable) {
    if (net_inactive_blocks > 0) hot_.inactive_split.increase(small, net_inactive_blocks);
    else if (net_inactive_blocks < 0) hot_.inactive_split.decrease(small, -net_inactive_blocks);
    if (net_inactive_bytes > 0) hot_.inactive_split_bytes.increase(small, net_inactive_bytes);
    else if (net_inactive_bytes < 0) hot_.inactive_split_bytes.decrease(small, -net_inactive_bytes);
  }
  if (active_apart_) [[unlikely]] {
    hot_.active.decrease(small, 1);
    hot_.active_bytes.decrease(small, i64(original_size));
  }
  hot_.requested_bytes.decrease(small, i64(requested));
}

HEADROOM_CACHE_PATH Bytes CachingAllocator::try_merge_blocks(Block* dst, Block* src, BlockPool& pool, BlockSet& set,
                                                             Block** slot) {
  // A neighbour is mergeable when it is cached: inactive, so in its pool's free or unmapped set (the
  // invariant check_invariants() enforces), which one hook load tells.
  if (!src || !src->hook.is_linked() || dst->mapped != src->mapped) return 0;
  if (dst->prev == src) {  // [src dst]
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
  } else {  // [dst src]
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  const Bytes subsumed = src->size;
  dst->size += subsumed;
  if (slot && !*slot && src->mapped) {
    *slot = src;  // stays linked: the caller hands its node to dst, then recycles it
    return subsumed;
  }
  if (src->mapped) set.erase(set.iterator_to(*src));
  else pool.unmapped.erase(pool.unmapped.iterator_to(*src));
  arena_.recycle(src);
  return subsumed;
}

// ---------------------------------------------------------------------------------------------
// empty_cache, private pools

void CachingAllocator::empty_cache() {
  ++epoch_;
  if (!captures_underway_.empty()) return;  // no releases while a capture is underway
  release_cached_blocks();
  after_operation();
}

void CachingAllocator::begin_allocate_to_pool(PoolId pool, StreamId stream) {
  auto it = graph_pools_.find(pool);
  if (it == graph_pools_.end()) {
    graph_pools_.emplace(pool, std::make_unique<PrivatePool>(pool));
  } else {
    // Sharing an existing pool (graph_pool_handle() reused by several captures).
    it->second->use_count++;
    graph_pools_freeable_.erase(pool);
  }
  captures_underway_.emplace_back(pool, stream);
  choose_path();
  after_operation();
}

void CachingAllocator::end_allocate_to_pool(PoolId pool) {
  auto it = std::find_if(captures_underway_.begin(), captures_underway_.end(),
                         [&](const auto& c) { return c.first == pool; });
  if (it != captures_underway_.end()) captures_underway_.erase(it);
  choose_path();
  after_operation();
}

void CachingAllocator::release_pool(PoolId pool) {
  ++epoch_;
  auto it = graph_pools_.find(pool);
  if (it == graph_pools_.end()) return;
  if (--it->second->use_count == 0) graph_pools_freeable_.insert(pool);
  after_operation();
}

Bytes CachingAllocator::private_pool_reserved_bytes() const {
  Bytes total = 0;
  for (const Block* b : all_blocks())
    if (b->pool->owner_private_pool && b->mapped) total += b->size;
  return total;
}

// ---------------------------------------------------------------------------------------------
// expandable segments (spec §4)

Block* CachingAllocator::try_allocate_expandable_block(AllocParams& p) {
  Block* candidate = find_expandable_block(p.stream, *p.pool, p.size);
  // candidate: unmapped -> null | unmapped -> free -> ... | free -> unmapped -> ...
  if (!candidate->mapped && !map_block(candidate, std::min(candidate->size, p.size))) return nullptr;
  while (candidate->size < p.size) {
    Bytes remaining = p.size - candidate->size;
    Block* next = candidate->next;
    if (!map_block(next, std::min(remaining, next->size))) return nullptr;
    candidate = next;  // map_block merged it with the free block before it
  }
  p.pool->erase(*candidate);
  return candidate;
}

Block* CachingAllocator::find_expandable_block(StreamId stream, BlockPool& pool, Bytes size) {
  auto allocatable = [](const Block* b) {
    return b && !b->allocated && b->event_count == 0 && b->stream_uses.empty();
  };
  auto has_room = [&](const Block* b) {
    Bytes bytes = 0;
    while (bytes < size && allocatable(b)) {
      bytes += b->size;
      b = b->next;
    }
    return bytes >= size;
  };
  for (auto it = pool.unmapped.lower_bound(AddressKey{stream, 0}, AddressKeyCompare{});
       it != pool.unmapped.end() && it->stream == stream; ++it) {
    Block* c = &*it;
    if (allocatable(c->prev)) c = c->prev;  // a free block right before the unmapped range helps
    if (has_room(c)) return c;
  }
  Bytes page = pool.is_small ? kSmallBuffer : config_.large_segment_size;
  expandable_segments_.push_back(std::make_unique<ExpandableSegment>(device_, stream, page));
  ExpandableSegment* es = expandable_segments_.back().get();
  choose_path();
  Block* candidate = arena_.make();
  candidate->ptr = es->ptr();
  candidate->size = es->size();
  candidate->stream = stream;
  candidate->pool = &pool;
  candidate->mapped = false;
  candidate->expandable = es;
  pool.unmapped.insert(*candidate);
  return candidate;
}

bool CachingAllocator::map_block(Block* to_map, Bytes size) {
  SegmentRange mapped = to_map->expandable->map({to_map->ptr, size});
  if (mapped.size == 0) return false;
  BlockPool& pool = *to_map->pool;
  pool.unmapped.erase(pool.unmapped.iterator_to(*to_map));
  to_map->mapped = true;
  if (mapped.size < to_map->size) {
    // to_map -> remaining (still unmapped) -> to_map->next
    Block* remaining = arena_.make();
    remaining->ptr = to_map->ptr + mapped.size;
    remaining->size = to_map->size - mapped.size;
    remaining->stream = to_map->stream;
    remaining->pool = &pool;
    remaining->mapped = false;
    remaining->expandable = to_map->expandable;
    remaining->prev = to_map;
    remaining->next = to_map->next;
    if (remaining->next) remaining->next->prev = remaining;
    to_map->next = remaining;
    pool.unmapped.insert(*remaining);
    to_map->size = mapped.size;
  }
  BlockSet& set = pool.free_blocks_or_make(to_map->stream);
  try_merge_blocks(to_map, to_map->prev, pool, set);
  try_merge_blocks(to_map, to_map->next, pool, set);
  pool.insert(set, *to_map);
  total_allocated_memory_ += mapped.size;
  hot_.reserved_bytes.increase(pool.is_small, i64(mapped.size));
  stats_.num_device_alloc++;
  trace(TraceAction::SegmentMap, mapped.ptr, mapped.size, to_map->stream);
  return true;
}

void CachingAllocator::unmap_block(Block* block) {
  SegmentRange unmapped = block->expandable->unmap({block->ptr, block->size});
  if (unmapped.size == 0) return;
  BlockPool& pool = *block->pool;
  BlockSet& set = pool.free_blocks_or_make(block->stream);
  set.erase(set.iterator_to(*block));
  Bytes before = unmapped.ptr - block->ptr;
  if (before > 0) {
    // prev? -> before_free -> block
    Block* b = arena_.make();
    b->ptr = block->ptr;
    b->size = before;
    b->stream = block->stream;
    b->pool = &pool;
    b->expandable = block->expandable;
    b->prev = block->prev;
    if (b->prev) b->prev->next = b;
    b->next = block;
    block->prev = b;
    pool.insert(set, *b);
  }
  Bytes after = block->size - (before + unmapped.size);
  if (after > 0) {
    // block -> after_free -> next?
    Block* a = arena_.make();
    a->ptr = unmapped.ptr + unmapped.size;
    a->size = after;
    a->stream = block->stream;
    a->pool = &pool;
    a->expandable = block->expandable;
    a->next = block->next;
    if (a->next) a->next->prev = a;
    a->prev = block;
    block->next = a;
    pool.insert(set, *a);
  }
  block->ptr = unmapped.ptr;
  block->size = unmapped.size;
  block->mapped = false;
  try_merge_blocks(block, block->prev, pool, set);
  try_merge_blocks(block, block->next, pool, set);
  pool.unmapped.insert(*block);
  total_allocated_memory_ -= unmapped.size;
  hot_.reserved_bytes.decrease(pool.is_small, i64(unmapped.size));
  stats_.num_device_free++;
  trace(TraceAction::SegmentUnmap, unmapped.ptr, unmapped.size, block->stream);
}

void CachingAllocator::release_expandable_segment(Block* block) {
  if (block->pool->owner_private_pool) block->pool->owner_private_pool->cuda_malloc_count--;
  destroy_expandable_segment(block);
}

void CachingAllocator::destroy_expandable_segment(Block* block) {
  ExpandableSegment* es = block->expandable;
  BlockPool& pool = *block->pool;
  pool.unmapped.erase(pool.unmapped.iterator_to(*block));
  arena_.recycle(block);
  auto it = std::find_if(expandable_segments_.begin(), expandable_segments_.end(),
                         [&](const auto& p) { return p.get() == es; });
  expandable_segments_.erase(it);
  choose_path();
}

// ---------------------------------------------------------------------------------------------
// history

void CachingAllocator::record_history(bool enabled, std::size_t max_entries) {
  recording_ = enabled;
  max_entries_ = max_entries;
  choose_path();
  ring_.clear();
  ring_next_ = 0;
}

void CachingAllocator::trace(TraceAction action, Address addr, Bytes size, StreamId stream,
                             std::optional<Bytes> device_free) {
  if (!recording_ || max_entries_ == 0) return;
  TraceEvent e;
  e.action = action;
  e.addr = addr;
  e.size = size;
  e.stream = stream;
  e.time_us = clock_us_;
  e.device_free = device_free;
  if (ring_.size() < max_entries_) {
    ring_.push_back(e);
  } else {
    ring_[ring_next_] = e;
    ring_next_ = (ring_next_ + 1) % max_entries_;
  }
}

std::vector<TraceEvent> CachingAllocator::history() const {
  std::vector<TraceEvent> out;
  out.reserve(ring_.size());
  for (std::size_t i = 0; i < ring_.size(); ++i) out.push_back(ring_[(ring_next_ + i) % ring_.size()]);
  return out;
}

}  // namespace headroom::alloc
