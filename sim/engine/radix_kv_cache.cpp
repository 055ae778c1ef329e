#include "sim/engine/radix_kv_cache.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/core/error.hpp"
#include "sim/engine/tree_nodes.hpp"

namespace headroom::engine {

namespace {

[[noreturn]] void broken(const std::string& what) { throw std::logic_error("RadixKvCache: " + what); }

}  // namespace

RadixKvCache::RadixKvCache(Tokens size) : size_(size) {
  if (size < 1) throw InputError("SGLang KV pool: size must be at least 1 token, got " + std::to_string(size));
  Node root;
  root.lock_ref = 1;  // RadixCache.reset: the root is never evicted
  root.live = true;
  nodes_.push_back(root);
}

// ---------------------------------------------------------------------------------------------
// Token pool

bool RadixKvCache::alloc(Tokens n) {
  if (n < 0) broken("alloc of " + std::to_string(n) + " tokens");
  if (n > available_size()) {
    ++counters_.failed_allocations;
    return false;
  }
  request_tokens_ += n;
  return true;
}

void RadixKvCache::free(Tokens n) {
  if (n < 0 || n > request_tokens_)
    broken("free of " + std::to_string(n) + " tokens but requests hold " + std::to_string(request_tokens_) +
           " outside the tree (double free?)");
  request_tokens_ -= n;
}

// ---------------------------------------------------------------------------------------------
// Nodes

RadixKvCache::NodeId RadixKvCache::new_node(NodeId parent, std::uint64_t base, Tokens offset, Tokens len) {
  const std::uint64_t key = child_key(base, offset);
  if (find_child(parent, key) != kNone) broken("two children under one key (a 64-bit name collision)");
  const NodeId id = take_tree_node(nodes_, spare_nodes_);
  Node& n = nodes_[id];
  n = Node{};
  n.base = base;
  n.offset = offset;
  n.len = len;
  n.parent = parent;
  n.last_access = clock_;
  n.created = ++created_;
  n.live = true;
  ++live_nodes_;
  children_.put(parent, key, id);
  ++nodes_[parent].children;
  cached_tokens_ += len;
  evictable_ += len;  // a new node is unlocked (RadixCache._insert_helper)
  refresh(parent);
  refresh(id);
  return id;
}

// RadixCache._split_node: a new node takes the child's first `at` tokens and its lock count; the
// child keeps the rest (and its identity, which a request may have locked).
RadixKvCache::NodeId RadixKvCache::split(NodeId child, Tokens at) {
  const NodeId up = take_tree_node(nodes_, spare_nodes_);
  Node& c = nodes_[child];
  Node& u = nodes_[up];
  u = Node{};
  u.lock_ref = c.lock_ref;
  u.last_access = clock_;
  u.created = ++created_;
  u.live = true;
  ++live_nodes_;
  children_.split_edge(u, up, c, child, at);
  return up;
}

RadixKvCache::Walk RadixKvCache::walk(const KvRequest& req, Tokens limit) {
  Walk w;
  touch(kRoot);
  while (w.matched < limit) {
    const TokenRun run = token_run(req, w.matched);
    const Tokens available = std::min(run.end, limit) - w.matched;
    const NodeId c = find_child(w.node, child_key(run.base, run.offset));
    if (c == kNone) break;
    if (nodes_[c].base != run.base || nodes_[c].offset != run.offset) break;  // a 64-bit name collision
    touch(c);
    if (nodes_[c].len > available) {  // the match ends inside the node
      w.node = split(c, available);
      w.matched += available;
      refresh(c);
      break;
    }
    w.matched += nodes_[c].len;
    w.node = c;
    refresh(c);
  }
  return w;
}

RadixKvCache::Match RadixKvCache::match_prefix(const KvRequest& req) { return match_prefix(req, req.num_tokens - 1); }

RadixKvCache::Match RadixKvCache::match_prefix(const KvRequest& req, Tokens max_tokens) {
  ++counters_.matches;
  const Tokens limit = std::max<Tokens>(max_tokens, 0);
  counters_.query_tokens += static_cast<std::uint64_t>(limit);
  if (limit == 0) return {};
  ++clock_;
  const Walk w = walk(req, limit);
  counters_.hit_tokens += static_cast<std::uint64_t>(w.matched);
  return {w.matched, w.node};
}

RadixKvCache::Insertion RadixKvCache::insert(const KvRequest& req, Tokens num_tokens, Tokens protected_len) {
  if (protected_len < 0 || protected_len > num_tokens || num_tokens > req.num_tokens)
    broken("insert of " + std::to_string(num_tokens) + " tokens (protected " + std::to_string(protected_len) +
           ") for request " + std::to_string(req.id) + " with " + std::to_string(req.num_tokens) + " tokens");
  if (num_tokens - protected_len > request_tokens_)
    broken("insert hands over " + std::to_string(num_tokens - protected_len) + " tokens but requests hold " +
           std::to_string(request_tokens_));
  if (num_tokens == 0) return {};
  ++clock_;
  const Walk w = walk(req, num_tokens);
  if (w.matched < protected_len)
    broken("request " + std::to_string(req.id) + " protects " + std::to_string(protected_len) +
           " tokens but only " + std::to_string(w.matched) + " are cached");
  const Tokens duplicates = w.matched - protected_len;
  request_tokens_ -= duplicates;  // back to the pool
  counters_.duplicate_tokens += static_cast<std::uint64_t>(duplicates);
  NodeId node = w.node;
  for (Tokens pos = w.matched; pos < num_tokens;) {
    const TokenRun run = token_run(req, pos);
    const Tokens len = std::min(run.end, num_tokens) - pos;
    node = new_node(node, run.base, run.offset, len);
    pos += len;
  }
  const Tokens fresh = num_tokens - w.matched;
  request_tokens_ -= fresh;  // now the tree's
  counters_.inserted_tokens += static_cast<std::uint64_t>(fresh);
  return {w.matched, node};
}

void RadixKvCache::inc_lock_ref(NodeId node) {
  if (!is_live(node)) broken("lock of a freed node " + std::to_string(node));
  for (NodeId n = node; n != kRoot; n = nodes_[n].parent) {
    Node& x = nodes_[n];
    if (x.lock_ref == 0) {
      evictable_ -= x.len;
      protected_ += x.len;
    }
    ++x.lock_ref;
    refresh(n);
  }
}

void RadixKvCache::dec_lock_ref(NodeId node) {
  if (!is_live(node)) broken("unlock of a freed node " + std::to_string(node));
  if (node != kRoot && nodes_[node].lock_ref == 0) broken("unlock of node " + std::to_string(node) + " that is not locked");
  for (NodeId n = node; n != kRoot; n = nodes_[n].parent) {
    Node& x = nodes_[n];
    if (x.lock_ref == 1) {
      evictable_ += x.len;
      protected_ -= x.len;
    }
    --x.lock_ref;
    refresh(n);
  }
}

Tokens RadixKvCache::evict(Tokens num_tokens) {
  Tokens freed = 0;
  while (freed < num_tokens && !heap_.empty()) {
    const NodeId x = heap_[0];
    heap_remove(x);
    Node& n = nodes_[x];
    freed += n.len;
    cached_tokens_ -= n.len;
    evictable_ -= n.len;
    ++counters_.evicted_nodes;
    children_.erase(n.parent, child_key(n.base, n.offset));
    const NodeId p = n.parent;
    n.live = false;
    spare_nodes_.push_back(x);
    --live_nodes_;
    --nodes_[p].children;
    refresh(p);  // may now be an unlocked leaf itself
  }
  counters_.evicted_tokens += static_cast<std::uint64_t>(freed);
  return freed;
}

// ---------------------------------------------------------------------------------------------
// Eviction heap

void RadixKvCache::refresh(NodeId n) {
  if (n == kRoot) return;
  const Node& x = nodes_[n];
  const bool leaf = x.live && x.lock_ref == 0 && x.children == 0;
  if (!leaf) {
    if (x.heap_pos != kNotInHeap) heap_remove(n);
    return;
  }
  if (x.heap_pos == kNotInHeap) {
    heap_.push_back(n);
    nodes_[n].heap_pos = static_cast<std::uint32_t>(heap_.size() - 1);
    sift_up(heap_.size() - 1);
    return;
  }
  sift_up(x.heap_pos);
  sift_down(nodes_[n].heap_pos);
}

void RadixKvCache::heap_remove(NodeId n) {
  const std::size_t i = nodes_[n].heap_pos;
  const NodeId last = heap_.back();
  heap_.pop_back();
  nodes_[n].heap_pos = kNotInHeap;
  if (i < heap_.size()) {
    heap_place(i, last);
    sift_up(i);
    sift_down(nodes_[last].heap_pos);
  }
}

void RadixKvCache::sift_up(std::size_t i) {
  const NodeId n = heap_[i];
  while (i > 0) {
    const std::size_t up = (i - 1) / 2;
    if (!before(n, heap_[up])) break;
    heap_place(i, heap_[up]);
    i = up;
  }
  heap_place(i, n);
}

void RadixKvCache::sift_down(std::size_t i) {
  const NodeId n = heap_[i];
  const std::size_t size = heap_.size();
  while (true) {
    std::size_t child = 2 * i + 1;
    if (child >= size) break;
    if (child + 1 < size && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], n)) break;
    heap_place(i, heap_[child]);
    i = child;
  }
  heap_place(i, n);
}

// ---------------------------------------------------------------------------------------------

std::vector<RadixKvCache::NodeInfo> RadixKvCache::snapshot() const {
  std::vector<NodeInfo> out;
  for (NodeId id = 1; id < nodes_.size(); ++id) {
    const Node& n = nodes_[id];
    if (!n.live) continue;
    out.push_back({n.created, nodes_[n.parent].created, n.base, n.offset, n.len, n.lock_ref, n.last_access});
  }
  std::sort(out.begin(), out.end(), [](const NodeInfo& a, const NodeInfo& b) { return a.created < b.created; });
  return out;
}

void RadixKvCache::check_invariants() const {
  const Node& root = nodes_[kRoot];
  if (!root.live || root.lock_ref != 1 || root.len != 0 || root.heap_pos != kNotInHeap) broken("the root changed");
  std::vector<std::uint32_t> children(nodes_.size(), 0);
  Tokens cached = 0, evictable = 0, locked = 0;
  std::uint32_t live = 0, leaves = 0;
  for (NodeId id = 1; id < nodes_.size(); ++id) {
    const Node& n = nodes_[id];
    if (!n.live) {
      if (n.heap_pos != kNotInHeap) broken("freed node " + std::to_string(id) + " is in the heap");
      continue;
    }
    ++live;
    const std::string name = "node " + std::to_string(id);
    if (n.len <= 0) broken(name + " holds no tokens");
    if (n.parent >= nodes_.size() || !nodes_[n.parent].live) broken(name + " has no live parent");
    if (find_child(n.parent, child_key(n.base, n.offset)) != id) broken(name + " is not found under its parent");
    ++children[n.parent];
    if (n.parent != kRoot && nodes_[n.parent].lock_ref < n.lock_ref)
      broken(name + " is locked more often than its parent");
    cached += n.len;
    (n.lock_ref == 0 ? evictable : locked) += n.len;
  }
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    const Node& n = nodes_[id];
    if (!n.live) continue;
    if (children[id] != n.children) broken("node " + std::to_string(id) + " miscounts its children");
    const bool leaf = id != kRoot && n.lock_ref == 0 && n.children == 0;
    if (leaf != (n.heap_pos != kNotInHeap))
      broken("node " + std::to_string(id) + (leaf ? " is an unlocked leaf missing from" : " should not be in") +
             " the eviction heap");
    leaves += leaf;
  }
  if (live != live_nodes_ || children_.size() != live_nodes_) broken("node counts are off");
  if (leaves != heap_.size()) broken("heap size is off");
  for (std::size_t i = 0; i < heap_.size(); ++i) {
    if (nodes_[heap_[i]].heap_pos != i) broken("heap positions are off");
    if (i > 0 && before(heap_[i], heap_[(i - 1) / 2])) broken("heap order broken");
  }
  if (cached != cached_tokens_) broken("cached tokens " + std::to_string(cached_tokens_) + " but nodes hold " + std::to_string(cached));
  if (evictable != evictable_) broken("evictable size " + std::to_string(evictable_) + " but unlocked nodes hold " + std::to_string(evictable));
  if (locked != protected_) broken("protected size " + std::to_string(protected_) + " but locked nodes hold " + std::to_string(locked));
  if (request_tokens_ < 0 || request_tokens_ + cached_tokens_ > size_) broken("more tokens held than the pool has");
}

}  // namespace headroom::engine
