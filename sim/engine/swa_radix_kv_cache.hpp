#pragma once
// SGLang's two KV pools of a sliding-window hybrid (gpt-oss, Llama 4) with their prefix cache,
// SWARadixCache (docs/serving-memory-model.md §2.2). Pinned to sgl-project/sglang main @ 99fab2ce6
// (2026-02-03; a build of it calls itself 0.5.8, its newest tag): python/sglang/srt/mem_cache/
// swa_radix_cache.py, swa_memory_pool.py (SWATokenToKVPoolAllocator), common.py.
//
// Pools (SWATokenToKVPoolAllocator, page_size 1): every token a request allocates takes one slot in
// the full pool and one in the SWA pool; free() gives back both (the SWA one only while the token
// still has it), free_swa() only the SWA one. As in RadixKvCache the pools count slots: held by
// requests outside the tree, held by the tree, and free, per pool.
//
// Tree: as RadixKvCache (tokens named as in kv_request.hpp, a match may split a node, a node never
// spans two 512-token hash blocks), with SWARadixCache's rules:
//  - a node holds full KV for its tokens, and SWA KV unless it is a tombstone (its SWA freed, its
//    full KV kept); a leaf is never a tombstone;
//  - two lock counts, full >= SWA: inc_lock_ref locks full KV up to the root but SWA KV only on the
//    nodes that cover the last `window` tokens (whole nodes), and returns the id (swa_uuid) of the
//    node where it stopped, which dec_lock_ref needs to stop there too;
//  - match_prefix keeps only a match whose last `window` tokens after the last tombstone on its
//    path still have SWA KV (or that has no tombstone above it);
//  - two LRU lists, most recent first, a child more recent than its parent: every node in the full
//    list, every non-tombstone node in the SWA list;
//  - evict(full, swa): first unlocked leaves from the full list's LRU end (each frees both pools,
//    then its tombstone ancestors left childless and unlocked go too: full KV only), until `full`
//    tokens; then, while fewer than `swa` SWA tokens were freed, SWA-unlocked nodes from the SWA
//    list's LRU end: an inner node is tombstoned (SWA freed), a leaf deleted (both);
//  - insert of a request's tokens whose SWA KV the scheduler freed up to swa_evicted: nodes past
//    the request's locked prefix that are tombstones take the request's KV where it still has SWA
//    KV (splitting the node at swa_evicted), new tokens before swa_evicted become a tombstone node.
// Node boundaries matter more here than in RadixKvCache, since locks and tombstones act on whole
// nodes: where SGLang stores a fresh prompt as one node, a hashed prompt here is one node per
// 512-token block, so fewer of its tokens are SWA-locked (whole nodes covering the window).
//
// Allocation-free once warm: nodes, the child index and both lists reuse their storage.
#include <cstdint>
#include <vector>

#include "sim/engine/kv_request.hpp"
#include "sim/engine/radix_child_index.hpp"

namespace headroom::engine {

class SwaRadixKvCache {
 public:
  using NodeId = std::uint32_t;
  static constexpr NodeId kRoot = 0;

  struct Counters {
    std::uint64_t matches = 0;
    std::uint64_t query_tokens = 0;
    std::uint64_t hit_tokens = 0;
    std::uint64_t inserted_tokens = 0;   // full KV the tree took over from requests
    std::uint64_t duplicate_tokens = 0;  // request tokens insert found cached, freed
    std::uint64_t evicted_full_tokens = 0;
    std::uint64_t evicted_swa_tokens = 0;
    std::uint64_t evicted_nodes = 0;
    std::uint64_t tombstoned_nodes = 0;
    std::uint64_t failed_allocations = 0;
  };
  struct Match {
    Tokens tokens = 0;
    NodeId node = kRoot;
  };
  // What inc_lock_ref took: the node, and swa_uuid_for_lock (0: SWA locked up to the root).
  struct Lock {
    NodeId node = kRoot;
    std::uint64_t swa_uuid = 0;
  };
  struct Evicted {
    Tokens full = 0;
    Tokens swa = 0;
  };

  // Throws InputError unless both pools and the window hold at least 1 token.
  SwaRadixKvCache(Tokens full_size, Tokens swa_size, Tokens window);

  // --- pools (SWATokenToKVPoolAllocator) ---
  Tokens full_size() const { return full_size_; }
  Tokens swa_size() const { return swa_size_; }
  Tokens window() const { return window_; }
  Tokens full_available() const { return full_size_ - request_full_ - tree_full_; }
  Tokens swa_available() const { return swa_size_ - request_swa_ - tree_swa_; }
  Tokens available_size() const;  // the smaller of the two
  // n slots in each pool for a request; false, nothing changed, when either pool has fewer.
  bool alloc(Tokens n);
  // A request gives back `full` full slots and `swa` SWA slots (allocator.free of its indices).
  // Throws std::logic_error when requests hold fewer.
  void free(Tokens full, Tokens swa);
  // A request gives back n SWA slots of tokens that left the window (allocator.free_swa).
  void free_swa(Tokens n);

  // --- tree (SWARadixCache) ---
  // Longest usable cached prefix of the request's first max_tokens tokens (see above).
  Match match_prefix(const KvRequest& req, Tokens max_tokens);
  Lock inc_lock_ref(NodeId node);
  void dec_lock_ref(const Lock& lock);
  // The request's first num_tokens tokens join the tree (_insert_helper). It holds full KV for
  // [protected_len, num_tokens) and SWA KV for [max(protected_len, swa_evicted), num_tokens);
  // the tree already holds its first protected_len tokens (its locked prefix). Duplicates go back
  // to the pools. Returns the length cached before. Throws std::logic_error when requests hold
  // fewer slots or the tree lacks the protected prefix.
  Tokens insert(const KvRequest& req, Tokens num_tokens, Tokens protected_len, Tokens swa_evicted);
  Evicted evict(Tokens full_tokens, Tokens swa_tokens);

  Tokens full_evictable_size() const { return full_evictable_; }
  Tokens swa_evictable_size() const { return swa_evictable_; }
  Tokens full_protected_size() const { return full_protected_; }
  Tokens swa_protected_size() const { return swa_protected_; }
  Tokens tree_full_tokens() const { return tree_full_; }  // evictable + protected, full pool
  Tokens tree_swa_tokens() const { return tree_swa_; }    // the same in the SWA pool
  Tokens request_full_tokens() const { return request_full_; }
  Tokens request_swa_tokens() const { return request_swa_; }
  std::uint32_t num_nodes() const { return live_nodes_; }
  const Counters& counters() const { return counters_; }

  // Introspection for tests and the scheduler's invariants.
  bool is_live(NodeId node) const { return node < nodes_.size() && nodes_[node].live; }
  Tokens node_tokens(NodeId node) const { return nodes_.at(node).len; }
  NodeId parent(NodeId node) const { return nodes_.at(node).parent; }
  std::uint32_t full_lock_ref(NodeId node) const { return nodes_.at(node).full_lock; }
  std::uint32_t swa_lock_ref(NodeId node) const { return nodes_.at(node).swa_lock; }
  bool is_tombstone(NodeId node) const { return nodes_.at(node).tombstone; }

  // Every live node but the root, parent before child (creation order), for tests.
  struct NodeInfo {
    std::uint64_t created = 0;
    std::uint64_t parent_created = 0;
    Tokens len = 0;
    std::uint32_t full_lock = 0;
    std::uint32_t swa_lock = 0;
    bool tombstone = false;
    bool operator==(const NodeInfo&) const = default;
  };
  std::vector<NodeInfo> snapshot() const;
  // Nodes from the LRU end of the full (or SWA) list, by creation order.
  std::vector<std::uint64_t> lru_order(bool swa_list) const;

  // Throws std::logic_error naming the first broken rule: links, child counts, lengths; full lock
  // >= SWA lock, no SWA lock on a tombstone, no tombstone leaf; evictable and protected sizes per
  // pool; list membership (every node in the full list, exactly the non-tombstones in the SWA
  // one); per pool, requests + tree + free = capacity.
  void check_invariants() const;

 private:
  static constexpr NodeId kNone = RadixChildIndex::kNone;
  static constexpr NodeId kHead = 1;  // list sentinels (both lists): the most recent end
  static constexpr NodeId kTail = 2;  // the least recent end

  struct Node {
    std::uint64_t base = 0;  // name of the first token: (base, offset)
    Tokens offset = 0;
    Tokens len = 0;
    NodeId parent = kNone;
    std::uint32_t children = 0;
    std::uint32_t full_lock = 0;
    std::uint32_t swa_lock = 0;
    std::uint64_t swa_uuid = 0;
    std::uint64_t created = 0;
    NodeId prev = kNone, next = kNone;          // full LRU list
    NodeId swa_prev = kNone, swa_next = kNone;  // SWA LRU list
    bool tombstone = false;
    bool in_full = false;
    bool in_swa = false;
    bool live = false;
  };

  // LRUList over one of the two link pairs.
  NodeId& prev_of(NodeId n, bool swa) { return swa ? nodes_[n].swa_prev : nodes_[n].prev; }
  NodeId& next_of(NodeId n, bool swa) { return swa ? nodes_[n].swa_next : nodes_[n].next; }
  NodeId prev_of(NodeId n, bool swa) const { return swa ? nodes_[n].swa_prev : nodes_[n].prev; }
  void list_unlink(NodeId n, bool swa);
  void list_add_after(NodeId at, NodeId n, bool swa);
  void list_insert_mru(NodeId n, bool swa);
  void list_remove(NodeId n, bool swa);
  void list_reset_mru(NodeId n, bool swa);
  void list_reset_path_mru(NodeId n, bool swa);
  // The next node towards the most recent end, from `from` (excluded), that is unlocked in that
  // list's pool (and a leaf when `leaf`); kNone past the head.
  NodeId list_prev_unlocked(NodeId from, bool swa, bool leaf) const;

  NodeId new_node(NodeId parent, std::uint64_t base, Tokens offset, Tokens len, bool tombstone);
  NodeId split(NodeId child, Tokens at);
  void delete_leaf(NodeId n);            // a non-tombstone leaf: both pools' KV back
  NodeId delete_tombstone_chain(NodeId n, Tokens& full_freed);
  void untombstone(NodeId n);
  void release(NodeId n);

  Tokens full_size_, swa_size_, window_;
  Tokens request_full_ = 0, request_swa_ = 0;
  Tokens tree_full_ = 0, tree_swa_ = 0;
  Tokens full_evictable_ = 0, swa_evictable_ = 0;
  Tokens full_protected_ = 0, swa_protected_ = 0;

  std::vector<Node> nodes_;
  std::vector<NodeId> spare_nodes_;
  std::uint32_t live_nodes_ = 0;
  RadixChildIndex children_;
  std::uint64_t created_ = 0;
  std::uint64_t swa_uuid_counter_ = 1;  // gen_swa_uuid: the first id is 2
  Counters counters_;
};

}  // namespace headroom::engine
