#pragma once
// A block: a contiguous range of one segment, allocated or free. Like PyTorch, one block type serves
// every role; free blocks sit in their pool's ordered sets through an intrusive hook, so finding the
// best fit and moving blocks between states never allocates.
#include <cstdint>
#include <tuple>
#include <vector>

#include <boost/intrusive/set.hpp>

#include "sim/core/units.hpp"

namespace headroom::alloc {

struct BlockPool;
class ExpandableSegment;

namespace bi = boost::intrusive;
using BlockHook = bi::set_member_hook<bi::link_mode<bi::safe_link>>;

struct Block {
  Address ptr = 0;
  Bytes size = 0;
  Bytes requested_size = 0;  // the unrounded request of the current (or last) allocation
  StreamId stream = 0;
  BlockPool* pool = nullptr;
  Block* prev = nullptr;  // address-ordered neighbours within the segment
  Block* next = nullptr;
  ExpandableSegment* expandable = nullptr;
  std::vector<StreamId> stream_uses;  // record_stream() targets other than `stream`
  std::int64_t gc_count_base = 0;     // pool search counter when the block was cached
  int event_count = 0;                // outstanding end-of-life events
  bool allocated = false;
  bool mapped = true;                 // false: an unmapped range of an expandable segment
  bool in_use = false;                // arena bookkeeping: slot holds a live block
  BlockHook hook;                     // membership in BlockPool::blocks or BlockPool::unmapped

  bool is_split() const { return prev != nullptr || next != nullptr; }
  bool active() const { return allocated || event_count > 0 || !stream_uses.empty(); }
};

// safe_link: unlinking resets the hook, so is_linked() tells set membership (invariant checks).
// A pool's free blocks on one stream are ordered (size, address): lower_bound(s, 0) is the best fit,
// ties to the lowest address (spec §2). The stream is the set's (BlockPool::by_stream), not the key's.
struct BySize {
  bool operator()(const Block& a, const Block& b) const {
    if (a.size != b.size) return a.size < b.size;
    return a.ptr < b.ptr;
  }
};

// Unmapped ranges of expandable segments are ordered (stream, address): the lowest address first.
struct ByAddress {
  bool operator()(const Block& a, const Block& b) const {
    if (a.stream != b.stream) return a.stream < b.stream;
    return a.ptr < b.ptr;
  }
};

// Search keys without constructing a Block.
struct SizeKey {
  Bytes size;
  Address ptr;
};
struct SizeKeyCompare {
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    if (a.size != b.size) return a.size < b.size;
    return a.ptr < b.ptr;
  }
};
// The best-fit search: lower_bound(size, address 0) with the address dropped, since no block sorts
// below address 0 (boost's lower_bound only asks block < key).
struct FitKey {
  Bytes size;
};
struct FitKeyCompare {
  bool operator()(const Block& b, const FitKey& k) const { return b.size < k.size; }
  bool operator()(const FitKey& k, const Block& b) const { return k.size <= b.size; }
};
struct AddressKey {
  StreamId stream;
  Address ptr;
};
struct AddressKeyCompare {
  static auto tie(const Block& b) { return std::tuple(b.stream, b.ptr); }
  static auto tie(const AddressKey& k) { return std::tuple(k.stream, k.ptr); }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const { return tie(a) < tie(b); }
};

using BlockSet = bi::set<Block, bi::member_hook<Block, BlockHook, &Block::hook>, bi::compare<BySize>,
                         bi::constant_time_size<true>>;
using UnmappedSet = bi::set<Block, bi::member_hook<Block, BlockHook, &Block::hook>, bi::compare<ByAddress>,
                            bi::constant_time_size<true>>;

}  // namespace headroom::alloc
