#include "sim/engine/radix_child_index.hpp"

#include <stdexcept>

namespace headroom::engine {

namespace {
constexpr std::size_t kInitialChildIndexSlots = 1024;
}  // namespace

RadixChildIndex::RadixChildIndex() : slots_(kInitialChildIndexSlots), mask_(kInitialChildIndexSlots - 1) {}

RadixChildIndex::NodeId RadixChildIndex::find(NodeId parent, std::uint64_t key) const {
  for (std::size_t i = home(parent, key);; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.child == kNone) return kNone;
    if (s.key == key && s.parent == parent) return s.child;
  }
}

void RadixChildIndex::put(NodeId parent, std::uint64_t key, NodeId child) {
  if (2 * (count_ + 1) > slots_.size()) grow();
  for (std::size_t i = home(parent, key);; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.child == kNone) {
      s = {key, parent, child};
      ++count_;
      return;
    }
    if (s.key == key && s.parent == parent) {
      s.child = child;
      return;
    }
  }
}

void RadixChildIndex::erase(NodeId parent, std::uint64_t key) {
  std::size_t i = home(parent, key);
  while (true) {
    const Slot& s = slots_[i];
    if (s.child == kNone) throw std::logic_error("RadixChildIndex: node to remove is missing from its parent");
    if (s.key == key && s.parent == parent) break;
    i = (i + 1) & mask_;
  }
  std::size_t hole = i;  // backward-shift deletion (see PagedKvCache::HashIndex::erase)
  for (std::size_t j = (i + 1) & mask_; slots_[j].child != kNone; j = (j + 1) & mask_) {
    const std::size_t h = home(slots_[j].parent, slots_[j].key);
    const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = Slot{};
  --count_;
}

void RadixChildIndex::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  mask_ = slots_.size() - 1;
  count_ = 0;
  for (const Slot& s : old)
    if (s.child != kNone) put(s.parent, s.key, s.child);
}

}  // namespace headroom::engine
