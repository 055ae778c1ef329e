#pragma once
// Pooled storage for Block objects: blocks are recycled through a free list, so splitting and
// merging in steady state never calls the system allocator (mimalloc-style size-class reuse).
#include <cstddef>
#include <memory>
#include <vector>

#include "sim/allocator/block.hpp"

namespace headroom::alloc {

class BlockArena {
 public:
  BlockArena() = default;
  BlockArena(const BlockArena&) = delete;
  BlockArena& operator=(const BlockArena&) = delete;

  bool can_make() const { return free_ != nullptr; }  // make() without growing
  Block* make() {
    if (!free_) grow();
    Block* b = free_;
    free_ = b->next;
    b->next = nullptr;
    b->in_use = true;
    return b;
  }
  void recycle(Block* b) {
    // Only the fields some make() caller does not set: every caller sets ptr, size, stream and pool,
    // and a recycled block is free (not allocated, no events, no stream uses, unlinked hook), so
    // gc_count_base is set again by the pool insert that any free block goes through.
    b->requested_size = 0;
    b->prev = nullptr;
    b->expandable = nullptr;
    b->mapped = true;
    b->in_use = false;
    b->next = free_;
    free_ = b;
  }
  // Visits every live block (for snapshots and invariant checks; not a hot path).
  template <class F>
  void for_each_live(F&& f) const {
    for (const auto& chunk : chunks_)
      for (std::size_t i = 0; i < kChunk; ++i)
        if (chunk[i].in_use) f(&chunk[i]);
  }

 private:
  static constexpr std::size_t kChunk = 1024;
  [[gnu::noinline]] void grow() {
    chunks_.push_back(std::make_unique<Block[]>(kChunk));
    Block* c = chunks_.back().get();
    for (std::size_t i = kChunk; i-- > 0;) {
      c[i].next = free_;
      free_ = &c[i];
    }
  }
  std::vector<std::unique_ptr<Block[]>> chunks_;
  Block* free_ = nullptr;
};

}  // namespace headroom::alloc
