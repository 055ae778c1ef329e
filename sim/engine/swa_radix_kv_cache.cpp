#include "sim/engine/swa_radix_kv_cache.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/core/error.hpp"
#include "sim/engine/tree_nodes.hpp"

namespace headroom::engine {

namespace {

[[noreturn]] void swa_tree_broken(const std::string& what) { throw std::logic_error("SwaRadixKvCache: " + what); }

}  // namespace

SwaRadixKvCache::SwaRadixKvCache(Tokens full_size, Tokens swa_size, Tokens window)
    : full_size_(full_size), swa_size_(swa_size), window_(window) {
  if (full_size < 1 || swa_size < 1 || window < 1)
    throw InputError("SGLang SWA KV pools: expected at least 1 token in each pool and a window of at least 1, got " +
                     std::to_string(full_size) + " full, " + std::to_string(swa_size) + " SWA, window " +
                     std::to_string(window));
  // SWARadixCache.reset: the root is locked in both pools and never evicted.
  nodes_.resize(3);
  nodes_[kRoot].full_lock = 1;
  nodes_[kRoot].swa_lock = 1;
  nodes_[kRoot].live = true;
  nodes_[kHead].next = nodes_[kHead].swa_next = kTail;
  nodes_[kTail].prev = nodes_[kTail].swa_prev = kHead;
}

Tokens SwaRadixKvCache::available_size() const { return std::min(full_available(), swa_available()); }

// ---------------------------------------------------------------------------------------------
// Pools

bool SwaRadixKvCache::alloc(Tokens n) {
  if (n < 0) swa_tree_broken("alloc of " + std::to_string(n) + " tokens");
  if (n > full_available() || n > swa_available()) {  // SWATokenToKVPoolAllocator.alloc returns None
    ++counters_.failed_allocations;
    return false;
  }
  request_full_ += n;
  request_swa_ += n;
  return true;
}

void SwaRadixKvCache::free(Tokens full, Tokens swa) {
  if (full < 0 || swa < 0 || full > request_full_ || swa > request_swa_)
    swa_tree_broken("free of " + std::to_string(full) + " full and " + std::to_string(swa) +
                    " SWA slots but requests hold " + std::to_string(request_full_) + " and " +
                    std::to_string(request_swa_) + " (double free?)");
  request_full_ -= full;
  request_swa_ -= swa;
}

void SwaRadixKvCache::free_swa(Tokens n) { free(0, n); }

// ---------------------------------------------------------------------------------------------
// LRU lists (LRUList): head = most recently used, tail = least.

void SwaRadixKvCache::list_unlink(NodeId n, bool swa) {
  const NodeId p = prev_of(n, swa);
  const NodeId q = next_of(n, swa);
  next_of(p, swa) = q;
  prev_of(q, swa) = p;
}

void SwaRadixKvCache::list_add_after(NodeId at, NodeId n, bool swa) {
  const NodeId q = next_of(at, swa);
  prev_of(n, swa) = at;
  next_of(n, swa) = q;
  prev_of(q, swa) = n;
  next_of(at, swa) = n;
}

void SwaRadixKvCache::list_insert_mru(NodeId n, bool swa) {
  Node& x = nodes_[n];
  bool& in = swa ? x.in_swa : x.in_full;
  if (in) swa_tree_broken("node " + std::to_string(n) + " inserted twice into an LRU list");
  if (swa && x.tombstone) swa_tree_broken("tombstone " + std::to_string(n) + " inserted into the SWA list");
  in = true;
  list_add_after(kHead, n, swa);
}

void SwaRadixKvCache::list_remove(NodeId n, bool swa) {
  Node& x = nodes_[n];
  bool& in = swa ? x.in_swa : x.in_full;
  if (!in) swa_tree_broken("node " + std::to_string(n) + " removed from an LRU list it is not in");
  in = false;
  list_unlink(n, swa);
}

void SwaRadixKvCache::list_reset_mru(NodeId n, bool swa) {
  if (!(swa ? nodes_[n].in_swa : nodes_[n].in_full)) swa_tree_broken("reset of a node not in its LRU list");
  list_unlink(n, swa);
  list_add_after(kHead, n, swa);
}

// reset_node_and_parents_mru: the path to the root at the most recent end, a child more recent
// than its parent; the SWA list skips tombstones.
void SwaRadixKvCache::list_reset_path_mru(NodeId n, bool swa) {
  NodeId at = kHead;
  for (; n != kRoot; n = nodes_[n].parent) {
    if (swa && nodes_[n].tombstone) continue;
    if (!(swa ? nodes_[n].in_swa : nodes_[n].in_full)) swa_tree_broken("reset of a node not in its LRU list");
    list_unlink(n, swa);
    list_add_after(at, n, swa);
    at = n;
  }
}

// get_prev_no_lock / get_prev_leaf_no_lock (the sentinels hold no lock and no child, so the walk
// stops at the head).
SwaRadixKvCache::NodeId SwaRadixKvCache::list_prev_unlocked(NodeId from, bool swa, bool leaf) const {
  NodeId x = prev_of(from, swa);
  while (x != kHead) {
    const Node& n = nodes_[x];
    const std::uint32_t lock = swa ? n.swa_lock : n.full_lock;
    if (lock == 0 && (!leaf || n.children == 0)) return x;
    x = prev_of(x, swa);
  }
  return kNone;
}

// ---------------------------------------------------------------------------------------------
// Nodes

SwaRadixKvCache::NodeId SwaRadixKvCache::new_node(NodeId parent, std::uint64_t base, Tokens offset, Tokens len,
                                                  bool tombstone) {
  // _add_new_node.
  const std::uint64_t key = RadixChildIndex::key(base, offset);
  if (children_.find(parent, key) != kNone) swa_tree_broken("two children under one key (a 64-bit name collision)");
  const NodeId id = take_tree_node(nodes_, spare_nodes_);
  Node& n = nodes_[id];
  n = Node{};
  n.base = base;
  n.offset = offset;
  n.len = len;
  n.parent = parent;
  n.tombstone = tombstone;
  n.created = ++created_;
  n.live = true;
  ++live_nodes_;
  children_.put(parent, key, id);
  ++nodes_[parent].children;
  list_insert_mru(id, false);
  full_evictable_ += len;
  tree_full_ += len;
  if (!tombstone) {
    list_insert_mru(id, true);
    swa_evictable_ += len;
    tree_swa_ += len;
  }
  return id;
}

// _split_node: a new upper node takes the child's first `at` tokens, its lock counts, tombstone
// state and swa_uuid; the child keeps the rest and its identity. In the lists the child ends most
// recent, the upper node right after it.
SwaRadixKvCache::NodeId SwaRadixKvCache::split(NodeId child, Tokens at) {
  const NodeId up = take_tree_node(nodes_, spare_nodes_);
  Node& c = nodes_[child];
  Node& u = nodes_[up];
  u = Node{};
  u.full_lock = c.full_lock;
  u.swa_lock = c.swa_lock;
  u.swa_uuid = c.swa_uuid;
  u.tombstone = c.tombstone;
  u.created = ++created_;
  u.live = true;
  c.swa_uuid = 0;
  ++live_nodes_;
  const bool tombstone = c.tombstone;
  list_remove(child, false);
  if (!tombstone) list_remove(child, true);
  children_.split_edge(u, up, c, child, at);
  list_insert_mru(up, false);
  list_insert_mru(child, false);
  if (!tombstone) {
    list_insert_mru(up, true);
    list_insert_mru(child, true);
  }
  return up;
}

void SwaRadixKvCache::release(NodeId n) {
  // The fields stay readable until the id is reused (evict reads a deleted node's parent).
  nodes_[n].live = false;
  spare_nodes_.push_back(n);
  --live_nodes_;
}

// _delete_leaf: an unlocked, non-tombstone leaf (already out of both lists) frees its KV in both pools.
void SwaRadixKvCache::delete_leaf(NodeId n) {
  Node& x = nodes_[n];
  if (x.tombstone || x.children != 0) swa_tree_broken("deleting node " + std::to_string(n) + " that is not a live leaf");
  children_.erase(x.parent, RadixChildIndex::key(x.base, x.offset));
  --nodes_[x.parent].children;
  full_evictable_ -= x.len;
  swa_evictable_ -= x.len;
  tree_full_ -= x.len;
  tree_swa_ -= x.len;
  ++counters_.evicted_nodes;
  release(n);
}

// _iteratively_delete_tombstone_leaf: tombstone ancestors left without children and without a
// full lock go, freeing their full KV. Returns the last node deleted (n itself if none).
SwaRadixKvCache::NodeId SwaRadixKvCache::delete_tombstone_chain(NodeId n, Tokens& full_freed) {
  while (true) {
    const NodeId p = nodes_[n].parent;
    Node& x = nodes_[p];
    if (p == kRoot || !x.tombstone || x.children != 0 || x.full_lock > 0) break;
    if (x.swa_lock != 0) swa_tree_broken("tombstone " + std::to_string(p) + " holds an SWA lock");
    full_freed += x.len;
    tree_full_ -= x.len;
    full_evictable_ -= x.len;
    list_remove(p, false);
    children_.erase(x.parent, RadixChildIndex::key(x.base, x.offset));
    --nodes_[x.parent].children;
    ++counters_.evicted_nodes;
    release(p);
    n = p;
  }
  return n;
}

void SwaRadixKvCache::untombstone(NodeId n) {
  Node& x = nodes_[n];
  x.tombstone = false;
  list_insert_mru(n, true);
  swa_evictable_ += x.len;  // a tombstone holds no SWA lock
  tree_swa_ += x.len;
}

// ---------------------------------------------------------------------------------------------
// Match, insert, locks, eviction

SwaRadixKvCache::Match SwaRadixKvCache::match_prefix(const KvRequest& req, Tokens max_tokens) {
  ++counters_.matches;
  const Tokens limit = std::max<Tokens>(max_tokens, 0);
  counters_.query_tokens += static_cast<std::uint64_t>(limit);
  if (limit == 0) return {};
  // _match_prefix_helper: a match may end only where the tokens since the last tombstone on its
  // path reach the window, or where no tombstone lies above it.
  NodeId node = kRoot;
  Tokens matched = 0;
  bool clear_to_root = true;  // match_len_since_tombstone = inf
  Tokens since = 0;
  Match best;
  while (matched < limit) {
    const TokenRun run = token_run(req, matched);
    const Tokens available = std::min(run.end, limit) - matched;
    const NodeId c = children_.find(node, RadixChildIndex::key(run.base, run.offset));
    if (c == kNone || nodes_[c].base != run.base || nodes_[c].offset != run.offset) break;
    if (nodes_[c].tombstone) {
      if (clear_to_root || since >= window_) best = {matched, node};
      clear_to_root = false;
      since = 0;
    }
    if (nodes_[c].len > available) {  // the match ends inside the node
      const NodeId up = split(c, available);
      matched += available;
      if (!nodes_[up].tombstone) since += available;
      node = up;
      break;
    }
    matched += nodes_[c].len;
    if (!nodes_[c].tombstone) since += nodes_[c].len;
    node = c;
  }
  if (clear_to_root || since >= window_) best = {matched, node};
  // Nodes nearer the root become less recent, so SWA tombstones them first.
  list_reset_path_mru(best.node, false);
  list_reset_path_mru(best.node, true);
  counters_.hit_tokens += static_cast<std::uint64_t>(best.tokens);
  return best;
}

Tokens SwaRadixKvCache::insert(const KvRequest& req, Tokens num_tokens, Tokens protected_len, Tokens swa_evicted) {
  if (protected_len < 0 || protected_len > num_tokens || num_tokens > req.num_tokens || swa_evicted < 0 ||
      swa_evicted > num_tokens)
    swa_tree_broken("insert of " + std::to_string(num_tokens) + " tokens (protected " + std::to_string(protected_len) +
                    ", SWA evicted to " + std::to_string(swa_evicted) + ") for request " + std::to_string(req.id) +
                    " with " + std::to_string(req.num_tokens) + " tokens");
  const Tokens own_full = num_tokens - protected_len;
  const Tokens own_swa = num_tokens - std::max(protected_len, swa_evicted);
  if (own_full > request_full_ || own_swa > request_swa_)
    swa_tree_broken("insert hands over " + std::to_string(own_full) + " full and " + std::to_string(own_swa) +
                    " SWA slots but requests hold " + std::to_string(request_full_) + " and " +
                    std::to_string(request_swa_));
  if (num_tokens == 0) return 0;
  Tokens freed_full = 0, freed_swa = 0, taken_full = 0, taken_swa = 0;
  NodeId node = kRoot;
  Tokens total = 0;
  while (total < num_tokens) {
    const TokenRun run = token_run(req, total);
    const Tokens available = std::min(run.end, num_tokens) - total;
    const NodeId c = children_.find(node, RadixChildIndex::key(run.base, run.offset));
    if (c == kNone || nodes_[c].base != run.base || nodes_[c].offset != run.offset) break;
    node = c;
    list_reset_mru(node, false);
    if (!nodes_[node].tombstone) list_reset_mru(node, true);
    const Tokens prefix_len = std::min(nodes_[node].len, available);
    if (prefix_len < nodes_[node].len) node = split(node, prefix_len);
    if (protected_len < total + prefix_len) {  // past the request's locked prefix
      if (protected_len > total)
        swa_tree_broken("request " + std::to_string(req.id) + "'s locked prefix ends inside a node");
      if (!nodes_[node].tombstone) {  // the tree has it: the request's copy goes back
        freed_full += prefix_len;
        freed_swa += std::max<Tokens>(0, total + prefix_len - std::max(total, swa_evicted));
      } else if (nodes_[node].swa_lock != 0) {
        swa_tree_broken("tombstone " + std::to_string(node) + " holds an SWA lock");
      } else if (swa_evicted <= total) {
        // Branch 1: the request still has SWA KV for all of it: the node takes the request's KV
        // and frees its own full KV.
        taken_full += prefix_len;
        taken_swa += prefix_len;
        untombstone(node);
      } else if (swa_evicted < total + prefix_len) {
        // Branch 2: the node is split at swa_evicted; the lower part takes the request's KV,
        // the upper stays a tombstone; the request's full KV before swa_evicted goes back.
        const Tokens start = swa_evicted - total;
        split(node, start);
        taken_full += prefix_len - start;
        taken_swa += prefix_len - start;
        freed_full += start;
        untombstone(node);
      } else {  // Branch 3: the request has no SWA KV there either: its full KV goes back
        freed_full += prefix_len;
      }
    }
    total += prefix_len;
  }
  const Tokens cached = total;
  if (total < num_tokens) {
    // New tokens before swa_evicted have lost their SWA KV: a tombstone node, then the rest.
    const Tokens tombstone_end = swa_evicted > total ? swa_evicted : total;
    for (Tokens pos = total; pos < num_tokens;) {
      const TokenRun run = token_run(req, pos);
      Tokens end = std::min(run.end, num_tokens);
      if (pos < tombstone_end) end = std::min(end, tombstone_end);
      node = new_node(node, run.base, run.offset, end - pos, pos < tombstone_end);
      pos = end;
    }
    taken_full += num_tokens - total;
    taken_swa += num_tokens - tombstone_end;
  }
  if (freed_full + taken_full != own_full || freed_swa + taken_swa != own_swa)
    swa_tree_broken("insert for request " + std::to_string(req.id) + " accounts " + std::to_string(freed_full) + " + " +
                    std::to_string(taken_full) + " full and " + std::to_string(freed_swa) + " + " +
                    std::to_string(taken_swa) + " SWA slots of " + std::to_string(own_full) + " and " +
                    std::to_string(own_swa));
  request_full_ -= own_full;
  request_swa_ -= own_swa;
  counters_.inserted_tokens += static_cast<std::uint64_t>(taken_full);
  counters_.duplicate_tokens += static_cast<std::uint64_t>(freed_full);
  return cached;
}

SwaRadixKvCache::Lock SwaRadixKvCache::inc_lock_ref(NodeId node) {
  if (!is_live(node)) swa_tree_broken("lock of a freed node " + std::to_string(node));
  Lock lock{node, 0};
  Tokens swa_locked = 0;
  for (NodeId n = node; n != kRoot; n = nodes_[n].parent) {
    Node& x = nodes_[n];
    if (x.full_lock == 0) {
      full_evictable_ -= x.len;
      full_protected_ += x.len;
    }
    ++x.full_lock;
    if (swa_locked < window_) {  // SWA only over the window; the node where it stops is marked
      if (x.tombstone) swa_tree_broken("SWA lock of tombstone " + std::to_string(n));
      if (x.swa_lock == 0) {
        swa_evictable_ -= x.len;
        swa_protected_ += x.len;
      }
      ++x.swa_lock;
      swa_locked += x.len;
      if (swa_locked >= window_) {
        if (x.swa_uuid == 0) x.swa_uuid = ++swa_uuid_counter_;
        lock.swa_uuid = x.swa_uuid;
      }
    }
  }
  return lock;
}

void SwaRadixKvCache::dec_lock_ref(const Lock& lock) {
  if (!is_live(lock.node)) swa_tree_broken("unlock of a freed node " + std::to_string(lock.node));
  bool swa = true;
  for (NodeId n = lock.node; n != kRoot; n = nodes_[n].parent) {
    Node& x = nodes_[n];
    if (x.full_lock == 0) swa_tree_broken("unlock of node " + std::to_string(n) + " that is not locked");
    if (x.full_lock == 1) {
      full_evictable_ += x.len;
      full_protected_ -= x.len;
    }
    --x.full_lock;
    if (swa) {
      if (x.tombstone || x.swa_lock == 0)
        swa_tree_broken("SWA unlock of node " + std::to_string(n) + " that is a tombstone or not SWA-locked");
      if (x.swa_lock == 1) {
        swa_evictable_ += x.len;
        swa_protected_ -= x.len;
      }
      --x.swa_lock;
      if (lock.swa_uuid != 0 && x.swa_uuid == lock.swa_uuid) swa = false;
    }
  }
}

SwaRadixKvCache::Evicted SwaRadixKvCache::evict(Tokens full_tokens, Tokens swa_tokens) {
  Evicted e;
  if (full_tokens > 0) {
    // Unlocked leaves from the full list's least recent end: each frees both pools.
    NodeId x = list_prev_unlocked(kTail, false, true);
    while (e.full < full_tokens && x != kNone) {
      e.full += nodes_[x].len;
      e.swa += nodes_[x].len;
      NodeId next = list_prev_unlocked(x, false, true);
      list_remove(x, false);
      list_remove(x, true);
      delete_leaf(x);
      const NodeId last = delete_tombstone_chain(x, e.full);
      // The parent may now be a leaf less recent than `next`.
      if (nodes_[nodes_[last].parent].children == 0) next = list_prev_unlocked(kTail, false, true);
      x = next;
    }
  }
  if (e.swa < swa_tokens) {
    // SWA-unlocked nodes from the SWA list's least recent end: inner nodes are tombstoned, leaves go.
    NodeId x = list_prev_unlocked(kTail, true, false);
    while (e.swa < swa_tokens && x != kNone) {
      Node& n = nodes_[x];
      const NodeId next = list_prev_unlocked(x, true, false);
      e.swa += n.len;
      if (n.children > 0) {
        list_remove(x, true);
        n.tombstone = true;
        swa_evictable_ -= n.len;
        tree_swa_ -= n.len;
        ++counters_.tombstoned_nodes;
      } else {
        if (n.full_lock != 0) swa_tree_broken("leaf " + std::to_string(x) + " is full-locked without an SWA lock");
        e.full += n.len;
        list_remove(x, false);
        list_remove(x, true);
        delete_leaf(x);
        delete_tombstone_chain(x, e.full);
      }
      x = next;
    }
  }
  counters_.evicted_full_tokens += static_cast<std::uint64_t>(e.full);
  counters_.evicted_swa_tokens += static_cast<std::uint64_t>(e.swa);
  return e;
}

// ---------------------------------------------------------------------------------------------

std::vector<SwaRadixKvCache::NodeInfo> SwaRadixKvCache::snapshot() const {
  std::vector<NodeInfo> out;
  for (NodeId id = 3; id < nodes_.size(); ++id) {
    const Node& n = nodes_[id];
    if (!n.live) continue;
    out.push_back({n.created, nodes_[n.parent].created, n.len, n.full_lock, n.swa_lock, n.tombstone});
  }
  std::sort(out.begin(), out.end(), [](const NodeInfo& a, const NodeInfo& b) { return a.created < b.created; });
  return out;
}

std::vector<std::uint64_t> SwaRadixKvCache::lru_order(bool swa_list) const {
  std::vector<std::uint64_t> out;
  for (NodeId x = prev_of(kTail, swa_list); x != kHead; x = prev_of(x, swa_list)) out.push_back(nodes_[x].created);
  return out;
}

void SwaRadixKvCache::check_invariants() const {
  const Node& root = nodes_[kRoot];
  if (!root.live || root.full_lock != 1 || root.swa_lock != 1 || root.len != 0 || root.in_full || root.in_swa ||
      root.tombstone)
    swa_tree_broken("the root changed");
  std::vector<std::uint32_t> children(nodes_.size(), 0);
  Tokens full = 0, swa = 0, full_evictable = 0, swa_evictable = 0, full_locked = 0, swa_locked = 0;
  std::uint32_t live = 0, non_tombstones = 0;
  for (NodeId id = 3; id < nodes_.size(); ++id) {
    const Node& n = nodes_[id];
    if (!n.live) continue;
    ++live;
    const std::string name = "node " + std::to_string(id);
    if (n.len <= 0) swa_tree_broken(name + " holds no tokens");
    if (n.parent >= nodes_.size() || !nodes_[n.parent].live || n.parent == kHead || n.parent == kTail)
      swa_tree_broken(name + " has no live parent");
    if (children_.find(n.parent, RadixChildIndex::key(n.base, n.offset)) != id)
      swa_tree_broken(name + " is not found under its parent");
    ++children[n.parent];
    if (n.swa_lock > n.full_lock) swa_tree_broken(name + " has more SWA locks than full locks");
    if (n.parent != kRoot && nodes_[n.parent].full_lock < n.full_lock)
      swa_tree_broken(name + " is full-locked more often than its parent");
    if (!n.in_full) swa_tree_broken(name + " is missing from the full LRU list");
    full += n.len;
    (n.full_lock == 0 ? full_evictable : full_locked) += n.len;
    if (n.tombstone) {
      if (n.swa_lock != 0 || n.in_swa) swa_tree_broken(name + " is a tombstone with an SWA lock or in the SWA list");
    } else {
      if (!n.in_swa) swa_tree_broken(name + " is missing from the SWA LRU list");
      ++non_tombstones;
      swa += n.len;
      (n.swa_lock == 0 ? swa_evictable : swa_locked) += n.len;
    }
  }
  for (NodeId id = 3; id < nodes_.size(); ++id) {
    const Node& n = nodes_[id];
    if (!n.live) continue;
    if (children[id] != n.children) swa_tree_broken("node " + std::to_string(id) + " miscounts its children");
    if (n.children == 0 && n.tombstone) swa_tree_broken("node " + std::to_string(id) + " is a tombstone leaf");
  }
  if (children[kRoot] != root.children) swa_tree_broken("the root miscounts its children");
  if (live != live_nodes_ || children_.size() != live_nodes_) swa_tree_broken("node counts are off");
  for (const bool swa_list : {false, true}) {
    std::uint32_t count = 0;
    for (NodeId x = kHead; x != kTail;) {
      const NodeId next = swa_list ? nodes_[x].swa_next : nodes_[x].next;
      if (next >= nodes_.size() || prev_of(next, swa_list) != x) swa_tree_broken("LRU list links are broken");
      if (next != kTail) {
        if (!nodes_[next].live || !(swa_list ? nodes_[next].in_swa : nodes_[next].in_full))
          swa_tree_broken("LRU list holds a node that is not in it");
        if (++count > live_nodes_) swa_tree_broken("LRU list has a cycle");
      }
      x = next;
    }
    if (count != (swa_list ? non_tombstones : live_nodes_)) swa_tree_broken("LRU list length is off");
  }
  if (full != tree_full_ || swa != tree_swa_)
    swa_tree_broken("tree holds " + std::to_string(tree_full_) + " full and " + std::to_string(tree_swa_) +
                    " SWA tokens but its nodes " + std::to_string(full) + " and " + std::to_string(swa));
  if (full_evictable != full_evictable_ || full_locked != full_protected_)
    swa_tree_broken("full evictable/protected sizes " + std::to_string(full_evictable_) + "/" +
                    std::to_string(full_protected_) + " but nodes hold " + std::to_string(full_evictable) + "/" +
                    std::to_string(full_locked));
  if (swa_evictable != swa_evictable_ || swa_locked != swa_protected_)
    swa_tree_broken("SWA evictable/protected sizes " + std::to_string(swa_evictable_) + "/" +
                    std::to_string(swa_protected_) + " but nodes hold " + std::to_string(swa_evictable) + "/" +
                    std::to_string(swa_locked));
  if (request_full_ < 0 || request_swa_ < 0 || full_available() < 0 || swa_available() < 0)
    swa_tree_broken("a pool holds more than its capacity");
}

}  // namespace headroom::engine
