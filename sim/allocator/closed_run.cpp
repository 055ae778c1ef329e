#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/allocator/caching_allocator.hpp"

namespace headroom::alloc {

namespace {

// The pools' peaks of `s` as the highest of their own and those of `other`.
void raise_peaks(PooledStat& s, const PooledStat& other) {
  for (int p = 0; p < 2; ++p) s.pool[p].peak = std::max(s.pool[p].peak, other.pool[p].peak);
  s.all_peak = std::max(s.all_peak, other.all_peak);
}

bool same_counts(const PooledStat& a, const PooledStat& b) {
  for (int p = 0; p < 2; ++p)
    if (a.pool[p].current != b.pool[p].current || a.pool[p].base != b.pool[p].base) return false;
  return true;
}

}  // namespace

RunMark CachingAllocator::begin_run() {
  settle_peaks();
  RunMark mark;
  mark.state = state_id();
  mark.stats = hot_;
  mark.device_allocs = stats_.num_device_alloc;
  mark.device_frees = stats_.num_device_free;
  mark.retries = stats_.num_alloc_retries;
  mark.ooms = stats_.num_ooms;
  mark.syncs = stats_.num_sync_all_streams;
  mark.plain = plain_;
  hot_.for_each([](PooledStat& s) { s.reset_peak(); });
  return mark;
}

bool CachingAllocator::end_run(const RunMark& mark, bool caller_closed, std::span<const Address> made, StreamId stream,
                               ClosedRun& run) {
  settle_peaks();
  last_closed_run_ = nullptr;
  const PooledStats during = hot_;  // peaks: the run's own
  for (PooledStat PooledStats::* m : PooledStats::kMembers) raise_peaks(hot_.*m, mark.stats.*m);
  if (!caller_closed || !mark.plain || !plain_ || epoch_ != mark.state.epoch ||
      stats_.num_device_alloc != mark.device_allocs || stats_.num_device_free != mark.device_frees ||
      stats_.num_alloc_retries != mark.retries || stats_.num_ooms != mark.ooms ||
      stats_.num_sync_all_streams != mark.syncs)
    return false;
  for (PooledStat PooledStats::* m : PooledStats::kMembers)
    if (!same_counts(hot_.*m, mark.stats.*m)) return false;
  run.operations = state_id().operations - mark.state.operations;
  for (PooledStat PooledStats::* m : PooledStats::kMembers) {
    PooledStat& e = run.effect.*m;
    e = during.*m;
    for (int p = 0; p < 2; ++p) e.pool[p].freed = (during.*m).pool[p].freed - (mark.stats.*m).pool[p].freed;
  }
  // The requested sizes the run wrote: every free sets the merged block's to the freed block's, and
  // every block freed was one the run allocated, so the free blocks holding one of the run's
  // addresses are those it wrote last, and no other was written. The stream's free blocks are few
  // (a dozen on a serving trace) and the run's addresses many (hundreds, a dozen distinct): each
  // address is looked up among the free blocks in address order.
  std::vector<WrittenBlock>& free = written_scratch_;
  free.clear();
  for (const BlockPool* pool : {&small_blocks_, &large_blocks_})
    if (const BlockSet* set = pool->free_blocks(stream))
      for (const Block& b : *set) free.push_back({b.ptr, b.ptr + b.size, &b, false});
  std::sort(free.begin(), free.end(), [](const WrittenBlock& x, const WrittenBlock& y) { return x.ptr < y.ptr; });
  WrittenBlock* const first = free.data();
  WrittenBlock* const last = first + free.size();
  WrittenBlock* hit = nullptr;  // the previous address's block: the next one is often in it too
  for (const Address a : made) {
    if (hit && a >= hit->ptr && a < hit->end) continue;
    WrittenBlock* after = std::upper_bound(first, last, a, [](Address x, const WrittenBlock& w) { return x < w.ptr; });
    if (after == first || a >= (after - 1)->end) continue;
    hit = after - 1;
    hit->written = true;
  }
  run.writes.clear();
  for (const WrittenBlock& w : free)
    if (w.written)
      run.writes.push_back({w.block->ptr, w.block->size, w.block->requested_size, stream, w.block->pool->is_small});
  operations_offset_ += run.operations;
  last_closed_run_ = &run;
  last_closed_state_ = state_id();
  return true;
}

void CachingAllocator::repeat(const ClosedRun& run) {
  settle_peaks();
  for (PooledStat PooledStats::* m : PooledStats::kMembers) {
    PooledStat& s = hot_.*m;
    const PooledStat& e = run.effect.*m;
    for (int p = 0; p < 2; ++p) s.pool[p].freed += e.pool[p].freed;
    raise_peaks(s, e);
  }
  operations_offset_ += run.operations;
  const bool written = last_closed_run_ == &run && last_closed_state_ == state_id();
  last_closed_run_ = &run;
  last_closed_state_ = state_id();
  if (written) return;
  for (const RequestedWrite& w : run.writes) {
    BlockSet* set = (w.small ? small_blocks_ : large_blocks_).free_blocks(w.stream);
    auto it = set ? set->find(SizeKey{w.size, w.ptr}, SizeKeyCompare{}) : BlockSet::iterator{};
    if (!set || it == set->end())
      throw std::logic_error(fmt::format("repeat: no free block of {} bytes at {:#x}: not the state the run started in",
                                         w.size, w.ptr));
    it->requested_size = w.requested;
  }
}

}  // namespace headroom::alloc
