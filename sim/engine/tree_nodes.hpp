#pragma once
// The radix caches' nodes live in one vector; a removed node's id goes to a spare list and the next
// node takes it, so a warm tree allocates nothing.
#include <vector>

namespace headroom::engine {

// An id for a new node: a spare one, else the vector grows by one (references into it then move).
template <class Node, class Id>
Id take_tree_node(std::vector<Node>& nodes, std::vector<Id>& spare) {
  if (!spare.empty()) {
    const Id id = spare.back();
    spare.pop_back();
    return id;
  }
  nodes.emplace_back();
  return static_cast<Id>(nodes.size() - 1);
}

}  // namespace headroom::engine
