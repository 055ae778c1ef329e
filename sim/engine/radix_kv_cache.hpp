#pragma once
// SGLang's token pool with its radix prefix cache (docs/serving-memory-model.md §2.2, §2.4; SGLang
// python/sglang/srt/mem_cache/radix_cache.py, allocator.py TokenToKVPoolAllocator).
//
// Pool: `size` token slots (page_size 1); the KV tensors have size + 1 rows because slot 0 is the
// dummy sink of padded tokens (free slots start at 1, §2.2). Which slot holds which token does
// not change any memory figure, so the pool counts slots: tokens held by requests outside the
// tree, tokens held by the tree, and the rest available.
//
// Tree: SGLang's radix tree is keyed by token ids. Here tokens are named as in kv_request.hpp, so
// two requests share tokens exactly where their Mooncake hash_ids agree: reuse between requests
// happens at 512-token block granularity (a real token-level match may also share the start of
// a block whose hash differs, e.g. the next turn of a conversation; that is not seen here). Within
// that naming the tree behaves as SGLang's: a match may end inside a node, which is then split
// (new upper node, same lock count); insert returns the length already cached; lock refs run up
// the path to the root, whose lock is 1; eviction frees whole leaves with lock_ref 0, least
// recently used first, and a leaf's parent becomes evictable once its last child is gone. One
// difference in shape: a node never spans two 512-token blocks (SGLang stores a fresh prompt as
// one node), so evict(n) overshoots n by at most one block's tokens where SGLang may free a
// whole long node.
//
// LRU time is a logical clock: each match_prefix / insert call is one tick, given to every node
// on its path (SGLang stamps them with one time.monotonic() per call); ties go to the older node.
// Allocation-free once warm: nodes, the child index and the eviction heap grow only past their
// high-water marks.
#include <cstdint>
#include <vector>

#include "sim/engine/kv_request.hpp"
#include "sim/engine/radix_child_index.hpp"

namespace headroom::engine {

class RadixKvCache {
 public:
  using NodeId = std::uint32_t;
  static constexpr NodeId kRoot = 0;

  struct Counters {
    std::uint64_t matches = 0;          // match_prefix calls
    std::uint64_t query_tokens = 0;     // Σ tokens asked for
    std::uint64_t hit_tokens = 0;       // Σ tokens found cached
    std::uint64_t inserted_tokens = 0;  // tokens the tree took over from requests
    std::uint64_t duplicate_tokens = 0; // tokens insert found cached already, returned to the pool
    std::uint64_t evicted_tokens = 0;
    std::uint64_t evicted_nodes = 0;
    std::uint64_t failed_allocations = 0;  // alloc calls that found too few slots
  };

  struct Match {
    Tokens tokens = 0;     // cached prefix length
    NodeId node = kRoot;   // the node to lock: its path covers exactly `tokens`
  };
  struct Insertion {
    Tokens prefix_len = 0;  // tokens that were cached before the insert
    NodeId node = kRoot;    // the node ending at the inserted length
  };

  // Throws InputError unless size >= 1.
  explicit RadixKvCache(Tokens size);

  // --- token pool (TokenToKVPoolAllocator) ---
  Tokens size() const { return size_; }
  Tokens tensor_rows() const { return size_ + 1; }  // slot 0 is the dummy (§2.2)
  Tokens available_size() const { return size_ - request_tokens_ - cached_tokens_; }
  // Takes n slots for a request; false, with nothing changed, when fewer are available
  // (TokenToKVPoolAllocator.alloc returns None; the scheduler evicts first).
  bool alloc(Tokens n);
  // Returns n slots a request holds outside the tree. Throws std::logic_error when requests do
  // not hold that many (a double free).
  void free(Tokens n);

  // --- radix tree (RadixCache) ---
  // Longest cached prefix of the request's first num_tokens − 1 tokens (SGLang caps the key at
  // input_len − 1 so one token is left to compute logits: schedule_batch.py Req
  // adjust_max_prefix_ids / _compute_max_prefix_len). Splits the node the match ends in.
  Match match_prefix(const KvRequest& req);
  // ... of its first `max_tokens` tokens.
  Match match_prefix(const KvRequest& req, Tokens max_tokens);

  // Adds the request's first num_tokens tokens (cache_finished_req / cache_unfinished_req).
  // The request held tokens [protected_len, num_tokens) outside the tree (tokens before
  // protected_len come from its locked match). Of those, the ones cached meanwhile go back to
  // the pool ("free the duplicates that were already in the tree"); the rest become cached and
  // evictable. Throws std::logic_error when requests hold fewer tokens, or when the tree does
  // not already hold the first protected_len tokens.
  Insertion insert(const KvRequest& req, Tokens num_tokens, Tokens protected_len);

  // One more / one less lock on every node from `node` up to the root (root excluded): a
  // locked node is protected, not evictable. Throws std::logic_error on a freed node or on
  // unlocking an unlocked one.
  void inc_lock_ref(NodeId node);
  void dec_lock_ref(NodeId node);

  // Frees least-recently-used unlocked leaves until at least num_tokens are freed or none is
  // left; returns the tokens freed (whole nodes, so possibly more than asked).
  Tokens evict(Tokens num_tokens);

  Tokens evictable_size() const { return evictable_; }
  Tokens protected_size() const { return protected_; }
  Tokens cached_tokens() const { return cached_tokens_; }    // evictable + protected
  Tokens request_tokens() const { return request_tokens_; }  // allocated, not in the tree
  std::uint32_t num_nodes() const { return live_nodes_; }    // root excluded
  const Counters& counters() const { return counters_; }

  // Introspection for tests.
  Tokens node_tokens(NodeId node) const { return nodes_.at(node).len; }
  std::uint32_t lock_ref(NodeId node) const { return nodes_.at(node).lock_ref; }
  NodeId parent(NodeId node) const { return nodes_.at(node).parent; }
  bool is_live(NodeId node) const { return node < nodes_.size() && nodes_[node].live; }
  bool is_evictable_leaf(NodeId node) const { return is_live(node) && nodes_[node].heap_pos != kNotInHeap; }

  // Every live node but the root, named by creation order (the root is 0), in creation order.
  // Allocates: for tests and reports.
  struct NodeInfo {
    std::uint64_t created = 0;
    std::uint64_t parent_created = 0;
    std::uint64_t base = 0;  // name of the first token: (base, offset), see kv_request.hpp
    Tokens offset = 0;
    Tokens len = 0;
    std::uint32_t lock_ref = 0;
    std::uint64_t last_access = 0;
    bool operator==(const NodeInfo&) const = default;
  };
  std::vector<NodeInfo> snapshot() const;

  // Throws std::logic_error naming the first broken rule: parent/child links and child counts;
  // node lengths positive; a parent's lock count at least its child's; evictable and protected
  // sizes equal the unlocked and locked node tokens; the heap holds exactly the unlocked leaves
  // in heap order; requests plus tree fit the pool.
  void check_invariants() const;

 private:
  static constexpr NodeId kNone = RadixChildIndex::kNone;
  static constexpr std::uint32_t kNotInHeap = UINT32_MAX;

  struct Node {
    std::uint64_t base = 0;  // name of the node's first token: (base, offset)
    Tokens offset = 0;
    Tokens len = 0;
    NodeId parent = kNone;
    std::uint32_t children = 0;
    std::uint32_t lock_ref = 0;
    std::uint64_t last_access = 0;
    std::uint64_t created = 0;  // creation order: the LRU tie-break
    std::uint32_t heap_pos = kNotInHeap;
    bool live = false;
  };

  struct Walk {
    Tokens matched = 0;
    NodeId node = kRoot;
  };
  Walk walk(const KvRequest& req, Tokens limit);

  static std::uint64_t child_key(std::uint64_t base, Tokens offset) { return RadixChildIndex::key(base, offset); }
  NodeId find_child(NodeId parent, std::uint64_t key) const { return children_.find(parent, key); }

  NodeId new_node(NodeId parent, std::uint64_t base, Tokens offset, Tokens len);
  NodeId split(NodeId child, Tokens at);
  void touch(NodeId n) { nodes_[n].last_access = clock_; }

  // Eviction heap over unlocked leaves, ordered by (last_access, created).
  bool before(NodeId a, NodeId b) const {
    const Node& x = nodes_[a];
    const Node& y = nodes_[b];
    return x.last_access != y.last_access ? x.last_access < y.last_access : x.created < y.created;
  }
  void refresh(NodeId n);  // puts n in, out of, or back in order in the heap
  void heap_remove(NodeId n);
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  void heap_place(std::size_t i, NodeId n) {
    heap_[i] = n;
    nodes_[n].heap_pos = static_cast<std::uint32_t>(i);
  }

  Tokens size_;
  Tokens request_tokens_ = 0;
  Tokens cached_tokens_ = 0;
  Tokens evictable_ = 0;
  Tokens protected_ = 0;

  std::vector<Node> nodes_;
  std::vector<NodeId> spare_nodes_;
  std::uint32_t live_nodes_ = 0;
  RadixChildIndex children_;
  std::vector<NodeId> heap_;
  std::uint64_t clock_ = 0;
  std::uint64_t created_ = 0;
  Counters counters_;
};

}  // namespace headroom::engine
