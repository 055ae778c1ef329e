#pragma once
// vLLM v1's paged KV cache with prefix caching (docs/serving-memory-model.md §1.2, §1.4; vLLM
// vllm/v1/core/kv_cache_manager.py, block_pool.py, single_type_kv_cache_manager.py).
//
//  - `num_blocks` blocks of `block_size` tokens; block 0 is the null block, never handed out, so
//    num_blocks − 1 are usable (§1.2).
//  - Each request has a block table. A full block gets a hash chained on its parent's hash; the
//    cache map finds a block by hash. Free blocks, cached ones included, sit in one free queue:
//    allocation pops the head (dropping its hash: an eviction), free() appends a request's
//    blocks tail first, so a request's last blocks are evicted before its first (§1.4).
//  - Block hashes from Mooncake hash_ids (kv_request.hpp): full block i (tokens [16i, 16i+16))
//    is hashed from its parent's hash and the name of its last token, i.e. the hash id of the
//    512-token block it lies in and its place in that block; past the hashed prefix, the request
//    id and the place. Two requests with equal leading hash ids therefore share exactly the
//    16-token blocks those ids cover, and nothing after.
//  - KV cache groups (vllm_kv_cache_groups.hpp; vllm/v1/core/kv_cache_coordinator.py,
//    single_type_kv_cache_manager.py): a hybrid model has several groups drawing on the one pool,
//    each with its own block table per request and its own cache entries (the block hash with the
//    group id). A sliding-window group frees the blocks wholly before computed − window + 1 on
//    each allocation (SlidingWindowManager.remove_skipped_blocks), leaving the null block in their
//    place; its prefix hit needs cdiv(window − 1, block) cached blocks in a row at the end
//    (SlidingWindowManager.find_longest_cache_hit), looked for within the full-attention hit,
//    which is then cut to it (HybridKVCacheCoordinator.find_longest_cache_hit).
//  - Chunked local attention (Llama 4; ChunkedLocalAttentionManager) in place of the sliding
//    window: the blocks wholly before the current chunk (floor(computed / chunk) × chunk tokens)
//    are freed; its prefix hit takes the blocks before the chunk the hit ends in as hits (null
//    blocks) and then needs the blocks from that chunk's start cached in a row.
//
// Allocation-free once warm: block arrays, the free queue and the hash index are sized at
// construction; per-request tables are recycled; the request-id index holds the window of live
// ids (id_window.hpp) and grows only when that window is wider than ever before.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/id_window.hpp"
#include "sim/engine/kv_request.hpp"

namespace headroom::engine {

class PagedKvCache {
 public:
  using BlockId = std::uint32_t;
  static constexpr BlockId kNullBlock = 0;

  struct Counters {
    std::uint64_t lookups = 0;           // find_cached_prefix calls (vLLM PrefixCacheStats.requests)
    std::uint64_t query_tokens = 0;      // Σ num_tokens looked up (PrefixCacheStats.queries)
    std::uint64_t hit_tokens = 0;        // Σ tokens found cached (PrefixCacheStats.hits)
    std::uint64_t allocated_blocks = 0;  // blocks popped from the free queue
    std::uint64_t evictions = 0;         // ... of which still carried a hash, now dropped
    std::uint64_t failed_allocations = 0;  // allocate_slots calls that found too few free blocks
  };

  // Throws InputError unless num_blocks >= 2 and block_size >= 1. `group_windows`: one entry per
  // KV cache group, 0 for full attention or the group's sliding window in tokens; at most one
  // window size (vLLM's coordinator takes full attention plus one other kind). `chunked_local`:
  // the non-zero windows are attention chunks (chunked local attention) rather than sliding windows.
  PagedKvCache(std::uint32_t num_blocks, Tokens block_size = 16, bool enable_caching = true,
               std::vector<Tokens> group_windows = {0}, bool chunked_local = false);

  // vLLM KVCacheManager.get_computed_blocks: tokens of the longest run of leading full blocks
  // whose hashes are cached, counting at most num_tokens − 1 tokens ("when all tokens hit the
  // cache, we must recompute the last token to obtain logits", max_cache_hit_length =
  // request.num_tokens − 1), so at most floor((num_tokens − 1) / block_size) blocks. The hit is
  // applied by the next allocate_slots for the same request (and forgotten by any other call to
  // allocate_slots). Only for a request that holds no blocks (waiting or preempted); 0 with
  // prefix caching off.
  Tokens find_cached_prefix(const KvRequest& req);

  // vLLM KVCacheManager.allocate_slots: grows the request's table to
  // ceil((computed + hit + num_new + lookahead) / block_size) blocks, where computed is
  // req.num_computed_tokens and hit the pending find_cached_prefix result. It needs the new
  // blocks plus the hit blocks that are free (ref 0), which leave the free queue when touched;
  // if the free queue is shorter it returns false and changes nothing. Then full blocks up to
  // min(computed + hit + num_new, num_tokens) get their hashes (lookahead tokens are not cached).
  // Throws std::logic_error for num_new_tokens < 1, as vLLM raises ValueError.
  bool allocate_slots(const KvRequest& req, Tokens num_new_tokens, Tokens num_lookahead_tokens = 0) {
    if (num_new_tokens >= 1 && num_lookahead_tokens >= 0 && req.num_computed_tokens >= 0 &&
        held_blocks_fit(req.id, req.num_computed_tokens + num_new_tokens, num_lookahead_tokens, req.num_tokens))
      return true;
    return allocate_new_slots(req, num_new_tokens, num_lookahead_tokens);
  }

  // allocate_slots' fast path alone, for a request of num_tokens tokens (KvRequest::num_tokens)
  // fed up to `fed` tokens (its computed tokens plus new ones, at least one): true when
  // allocate_slots would find nothing to do and return true, so the caller (a decode step) need
  // not build a KvRequest.
  bool fits_held_blocks(RequestId id, Tokens fed, Tokens num_tokens) const {
    return held_blocks_fit(id, fed, 0, num_tokens);
  }

  // The most tokens a decoding request (num_tokens = fed) may have fed with fits_held_blocks still
  // true: fits_held_blocks(id, fed, fed) == (fed <= decode_fit_limit(id)) until the request's own
  // blocks change or a prefix lookup is pending. 0 (never) where the fast path does not apply.
  Tokens decode_fit_limit(RequestId id) const {
    if (pending_valid_ || sliding_window_ != 0) return 0;
    const RequestState* s = state_of(id);
    if (!s) return 0;
    const Tokens held = static_cast<Tokens>(s->tables[0].size()) * block_size_;
    return caching_ ? std::min(held, static_cast<Tokens>(s->num_hashed + 1) * block_size_ - 1) : held;
  }
  // find_cached_prefix's hit waits for the next allocate_slots.
  bool prefix_lookup_pending() const { return pending_valid_; }

  // vLLM KVCacheManager.free: every block of the request loses one reference, and those left
  // with none join the free queue in reverse table order, hashes kept. False (nothing done) for
  // a request holding no blocks, as vLLM pops an absent request's table as empty.
  bool free(RequestId id);

  // The request is gone for good (it holds no blocks): its id leaves the index, so the index
  // follows the live requests. Its cached blocks stay cached. std::logic_error if it holds blocks.
  void release(RequestId id);

  std::uint32_t num_blocks() const { return num_blocks_; }
  Tokens block_size() const { return block_size_; }
  std::size_t num_groups() const { return windows_.size(); }
  Tokens group_window(std::size_t group) const { return windows_.at(group); }
  bool chunked_local() const { return chunked_; }
  bool caching_enabled() const { return caching_; }
  // Free-queue length: never-used blocks plus cached blocks nobody references (vLLM
  // BlockPool.get_num_free_blocks).
  std::uint32_t num_free_blocks() const { return free_count_; }
  // 1 − free / (num_blocks − 1) (BlockPool.get_usage: the null block is not counted).
  double usage() const;
  // Blocks that carry a hash: in use or evictable.
  std::uint32_t num_cached_blocks() const { return hashed_count_; }
  // Free-queue blocks that carry a hash: evictable prefix cache.
  std::uint32_t num_cached_free_blocks() const { return cached_free_; }
  std::uint32_t num_requests() const { return live_requests_; }
  const Counters& counters() const { return counters_; }

  // The request's block table in a group (empty when it holds none); a sliding-window group has
  // kNullBlock where blocks left the window.
  std::span<const BlockId> block_table(RequestId id, std::size_t group = 0) const;
  // Blocks the request holds, the null block not counted, over all groups.
  std::size_t blocks_held(RequestId id) const;
  std::uint32_t ref_count(BlockId block) const { return ref_.at(block); }
  bool is_cached(BlockId block) const { return hashed_.at(block) != 0; }
  // The free queue from head (next to be allocated) to tail. Allocates: for tests.
  std::vector<BlockId> free_queue() const;

  // Throws std::logic_error naming the first broken rule: a block's ref count is the number of
  // tables holding it; the free queue holds exactly the ref-0 blocks, each once, never the null
  // block; every index entry leads to blocks carrying that hash and every hashed block is
  // indexed; a request's first num_cached blocks are hashed; the counts kept match.
  void check_invariants() const;

 private:
  struct RequestState {
    RequestId id = 0;
    std::vector<std::vector<BlockId>> tables;  // per group, all of one length
    std::uint32_t num_hashed = 0;    // leading blocks already given a hash
    std::uint64_t last_hash = 0;     // chain hash of block num_hashed − 1 (chain root when 0 blocks)
  };

  // hash → oldest block carrying it; open addressing, linear probing, backward-shift deletion.
  // Keys are stored mixed (fmix64, a bijection, so equal keys are equal hashes): a key's home slot
  // is its low bits, with no mixing again when deletion shifts entries back.
  class HashIndex {
   public:
    static constexpr BlockId kNone = UINT32_MAX;
    explicit HashIndex(std::uint32_t max_entries);
    BlockId find(std::uint64_t hash) const;
    void set(std::uint64_t hash, BlockId head);  // inserts or overwrites
    void erase(std::uint64_t hash);
    std::uint32_t size() const { return size_; }
    template <class F> void for_each(F f) const {  // f(fmix64(hash), head)
      for (std::size_t i = 0; i < heads_.size(); ++i)
        if (heads_[i] != kNone) f(keys_[i], heads_[i]);
    }

   private:
    std::vector<std::uint64_t> keys_;
    std::vector<BlockId> heads_;
    std::size_t mask_ = 0;
    std::uint32_t size_ = 0;
  };

  // Names the last tokens of a request's blocks in increasing order: token_run once per run of
  // tokens sharing a name base (a 512-token hash block spans 32 blocks of 16; the request's own
  // tokens all the blocks past its hashed prefix), not once per block. The names are token_run's.
  class BlockNames {
   public:
    explicit BlockNames(const KvRequest& req) : req_(req) {}
    TokenRun at(Tokens position) {  // base and offset of `position`
      if (!(position >= start_ && position < run_.end)) {
        run_ = token_run(req_, position);
        start_ = position;
      }
      return {run_.base, run_.offset + (position - start_), run_.end};
    }

   private:
    const KvRequest& req_;
    TokenRun run_{0, 0, 0};  // empty until the first call
    Tokens start_ = 0;
  };
  std::uint64_t block_hash(BlockNames& names, std::uint64_t parent, Tokens index) const;
  // The cache key of a chain hash in a group (vLLM BlockHashWithGroupId); group 0 keeps the hash.
  static std::uint64_t group_key(std::uint64_t hash, std::size_t group) {
    return group == 0 ? hash : mix_hash(hash, static_cast<std::uint64_t>(group));
  }
  bool sliding(std::size_t group) const { return windows_[group] > 0; }
  // Blocks wholly before the window of `computed` tokens (get_num_skipped_tokens // block_size).
  std::size_t skipped_blocks(std::size_t group, Tokens computed) const;
  void remove_skipped_blocks(RequestState& s, Tokens computed);
  // The longest run of leading full blocks cached in every group of a kind, searched as vLLM does.
  std::size_t full_attention_hit(const KvRequest& req, std::size_t max_blocks);
  std::size_t sliding_window_hit(std::size_t max_blocks);
  std::size_t chunked_local_hit(std::size_t max_blocks);
  // Most decode steps: the request's new tokens fit in the blocks it holds and fill none of them,
  // so there is nothing to allocate, evict or hash (the general path would find the same). Full
  // attention only: a sliding window frees blocks on every call.
  bool held_blocks_fit(RequestId id, Tokens fed, Tokens lookahead, Tokens num_tokens) const {
    if (pending_valid_ || sliding_window_ != 0) return false;
    const RequestState* s = state_of(id);
    return s && fed + lookahead <= static_cast<Tokens>(s->tables[0].size()) * block_size_ &&
           (!caching_ || std::min(fed, num_tokens) < static_cast<Tokens>(s->num_hashed + 1) * block_size_);
  }
  // allocate_slots past its fast path: the general case.
  bool allocate_new_slots(const KvRequest& req, Tokens num_new_tokens, Tokens num_lookahead_tokens);
  RequestState* state_of(RequestId id) {
    if (!state_index_.contains(id) || state_index_[id] < 0) return nullptr;
    return &states_[static_cast<std::size_t>(state_index_[id])];
  }
  const RequestState* state_of(RequestId id) const {
    if (!state_index_.contains(id) || state_index_[id] < 0) return nullptr;
    return &states_[static_cast<std::size_t>(state_index_[id])];
  }
  RequestState& new_state(RequestId id);

  void queue_push_back(BlockId b);
  void queue_remove(BlockId b);
  BlockId queue_pop_front();
  void cache_block(BlockId b, std::uint64_t hash);
  void uncache_block(BlockId b);

  std::uint32_t num_blocks_;
  Tokens block_size_;
  bool caching_;
  std::vector<Tokens> windows_;  // per group: 0 full attention, else the sliding window
  bool any_full_ = false;
  Tokens sliding_window_ = 0;    // the one window of the sliding groups, 0 when none
  bool chunked_ = false;         // the sliding groups are chunked local attention, windows their chunks

  std::vector<std::uint32_t> ref_;
  std::vector<std::uint8_t> hashed_;
  std::vector<std::uint64_t> hash_;
  // Free queue: doubly linked over block ids, sentinel num_blocks_.
  std::vector<BlockId> next_, prev_;
  std::uint32_t free_count_ = 0;
  std::uint32_t cached_free_ = 0;  // of which carry a hash
  // Blocks sharing one hash (vLLM does not deduplicate): a circular list per hash, oldest first.
  std::vector<BlockId> same_next_, same_prev_;
  HashIndex index_;
  std::uint32_t hashed_count_ = 0;

  IdWindow<std::int64_t> state_index_{-1};  // by request id: index into states_, or −1
  std::vector<RequestState> states_;
  std::vector<std::uint32_t> spare_states_;
  std::uint32_t live_requests_ = 0;
  std::size_t longest_table_ = 0;  // recycled tables are grown to this at once, so growth stops

  // The last find_cached_prefix result, waiting for allocate_slots: per group, the hit blocks
  // (kNullBlock before a sliding window's run), all of pending_hit_ entries.
  bool pending_valid_ = false;
  RequestId pending_id_ = 0;
  std::vector<std::vector<BlockId>> pending_blocks_;
  std::size_t pending_hit_ = 0;
  std::uint64_t pending_last_hash_ = 0;
  std::vector<std::uint64_t> chain_;  // scratch: the request's chain hashes during a lookup


  Counters counters_;
};

}  // namespace headroom::engine
