#pragma once
// Pools of cached free blocks. The default allocator has one small and one large pool; each CUDA graph
// private pool has its own pair (spec §1, §4).
#include <cstdint>
#include <utility>

#include "sim/allocator/block.hpp"

namespace headroom::alloc {

struct PrivatePool;

struct BlockPool {
  BlockPool(bool small, PrivatePool* owner = nullptr) : is_small(small), owner_private_pool(owner) {}
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  ~BlockPool() {
    blocks.clear();
    unmapped.clear();
  }

  BlockSet blocks;        // free, mapped blocks
  UnmappedSet unmapped;   // unmapped tails of expandable segments
  const bool is_small;
  PrivatePool* const owner_private_pool;
  std::int64_t get_free_blocks_call_count = 0;  // GC "clock" (spec §3 step 2)

  void insert(Block& b) {
    b.gc_count_base = get_free_blocks_call_count;
    blocks.insert(b);
  }
};

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
