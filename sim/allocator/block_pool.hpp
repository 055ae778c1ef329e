#pragma once
// Pools of cached free blocks. The default allocator has one small and one large pool; each CUDA graph
// private pool has its own pair (spec §1, §4).
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/allocator/block.hpp"

namespace headroom::alloc {

struct PrivatePool;

// A pool's free, mapped blocks on one stream, in (size, address) order. PyTorch keeps one set per
// pool ordered (stream, size, address) (CUDACachingAllocator.cpp, BlockComparatorSize); one set per
// stream holds the same blocks in the same order, set after set, and its searches and re-keys never
// compare streams.
struct StreamBlocks {
  explicit StreamBlocks(StreamId s) : stream(s) {}
  StreamBlocks(const StreamBlocks&) = delete;
  StreamBlocks& operator=(const StreamBlocks&) = delete;
  ~StreamBlocks() { blocks.clear(); }
  const StreamId stream;
  BlockSet blocks;
};

struct BlockPool {
  BlockPool(bool small, PrivatePool* owner = nullptr) : is_small(small), owner_private_pool(owner) {}
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  ~BlockPool() { clear(); }

  std::vector<std::unique_ptr<StreamBlocks>> by_stream;  // free, mapped blocks; in stream order
  UnmappedSet unmapped;   // unmapped tails of expandable segments
  const bool is_small;
  PrivatePool* const owner_private_pool;
  std::int64_t get_free_blocks_call_count = 0;  // GC "clock" (spec §3 step 2)

  // The stream's free blocks, or nullptr when the pool never cached a block on that stream.
  BlockSet* free_blocks(StreamId stream) const {
    if (last_ && last_->stream == stream) [[likely]]  // a forward pass runs on one stream
      return &last_->blocks;
    for (const auto& s : by_stream) {
      if (s->stream == stream) {
        last_ = s.get();
        return &s->blocks;
      }
    }
    return nullptr;
  }
  BlockSet& free_blocks_or_make(StreamId stream) {
    if (last_ && last_->stream == stream) [[likely]]
      return last_->blocks;
    return find_or_make(stream);
  }

  void insert(Block& b) { insert(free_blocks_or_make(b.stream), b); }
  void insert(BlockSet& set, Block& b) {
    b.gc_count_base = get_free_blocks_call_count;
    set.insert_equal(b);
  }
  void erase(Block& b) {
    BlockSet& set = *free_blocks(b.stream);
    set.erase(set.iterator_to(b));
  }

  std::size_t free_count() const {
    std::size_t n = 0;
    for (const auto& s : by_stream) n += s->blocks.size();
    return n;
  }
  // Every free block in PyTorch's (stream, size, address) order; f may take the block it is given
  // out of the set (release it), not any other.
  template <class F>
  void for_each_free(F&& f) const {
    for (const auto& s : by_stream) {
      for (auto it = s->blocks.begin(); it != s->blocks.end();) {
        Block& b = *it++;
        f(b);
      }
    }
  }
  void clear() {
    for (auto& s : by_stream) s->blocks.clear();
    unmapped.clear();
  }

 private:
  [[gnu::noinline]] BlockSet& find_or_make(StreamId stream) {
    if (BlockSet* set = free_blocks(stream)) return *set;
    auto at = by_stream.begin();
    while (at != by_stream.end() && (*at)->stream < stream) ++at;
    last_ = by_stream.insert(at, std::make_unique<StreamBlocks>(stream))->get();
    return last_->blocks;
  }
  mutable StreamBlocks* last_ = nullptr;  // the set asked for last
};

// The best fit in a stream's free blocks: the first block of size >= `size` (lowest address among
// equals), as lower_bound finds it, and the block just before it in the set (nullptr if none), which
// the same descent passes: the last block it turns right at. A split may re-key its remainder in place
// when the remainder still sorts after that predecessor. Both are nullptr-safe on an empty set.
struct BestFit {
  Block* block = nullptr;
  Block* pred = nullptr;
};
inline BestFit best_fit(BlockSet& set, Bytes size) {
  using traits = BlockSet::node_traits;
  BestFit fit;
  auto node = set.root().pointed_node();
  if (node == set.end().pointed_node()) return fit;
  do {
    Block* b = BlockSet::value_traits::to_value_ptr(node);
    if (b->size < size) {
      fit.pred = b;
      node = traits::get_right(node);
    } else {
      fit.block = b;
      node = traits::get_left(node);
    }
  } while (node);
  return fit;
}

// Puts two blocks adjacent in a set's order in each other's place, when a re-keyed block passed its
// neighbour by one position (the common case in a forward pass): the nodes trade places and colours,
// no comparison and no rebalancing, where an erase and an insert would do both.
inline void swap_places(BlockSet& set, Block& a, Block& b) {
  const auto header = set.end().pointed_node();
  BlockSet::node_algorithms::swap_nodes(set.iterator_to(a).pointed_node(), header, set.iterator_to(b).pointed_node(),
                                        header);
}

// A MempoolId: (0, n) for graph_pool_handle()/MemPool ids, (n, 0) for a capture's own pool.
using PoolId = std::pair<std::uint64_t, std::uint64_t>;

struct PrivatePool {
  explicit PrivatePool(PoolId pool_id) : id(pool_id), large(false, this), small(true, this) {}
  PoolId id;
  int use_count = 1;         // graphs (or MemPools) that share this pool
  int cuda_malloc_count = 0; // segments it owns; the pool is deleted when freeable and this is 0
  BlockPool large;
  BlockPool small;
};

}  // namespace headroom::alloc
