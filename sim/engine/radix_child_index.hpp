#pragma once
// The (parent node, first-token key) -> child map of a radix tree (RadixKvCache, SwaRadixKvCache):
// SGLang's TreeNode.children dicts, as one open-addressing table over every node so that a warm
// tree allocates nothing (it grows only past its high-water mark, at half load). Deletion shifts
// later entries back (no tombstones), so lookups never degrade.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/engine/kv_request.hpp"

namespace headroom::engine {

class RadixChildIndex {
 public:
  using NodeId = std::uint32_t;
  static constexpr NodeId kNone = UINT32_MAX;

  RadixChildIndex();

  // The key of a child whose first token is named (base, offset) (kv_request.hpp).
  static std::uint64_t key(std::uint64_t base, Tokens offset) {
    return mix_hash(base, static_cast<std::uint64_t>(offset));
  }
  NodeId find(NodeId parent, std::uint64_t key) const;
  void put(NodeId parent, std::uint64_t key, NodeId child);  // inserts or overwrites
  // Throws std::logic_error when the entry is missing.
  void erase(NodeId parent, std::uint64_t key);
  std::size_t size() const { return count_; }

  // SGLang's _split_node, the tree's half (both caches): the new node `up` takes the first `at`
  // tokens of `child` and its place under the parent; the child keeps the rest, under `up`.
  template <class Node>
  void split_edge(Node& u, NodeId up, Node& c, NodeId child, Tokens at) {
    u.base = c.base;
    u.offset = c.offset;
    u.len = at;
    u.parent = c.parent;
    u.children = 1;
    put(u.parent, key(u.base, u.offset), up);  // replaces the child under its key
    c.offset += at;
    c.len -= at;
    c.parent = up;
    put(up, key(c.base, c.offset), child);
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    NodeId parent = kNone;
    NodeId child = kNone;
  };
  std::size_t home(NodeId parent, std::uint64_t key) const {
    return static_cast<std::size_t>(mix_hash(key, parent)) & mask_;
  }
  void grow();

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t count_ = 0;
};

}  // namespace headroom::engine
