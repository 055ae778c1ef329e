#pragma once
// Limits on the snapshots headroom reads (docs/limits.md says why each is where it is).
#include <cstddef>
#include <cstdint>

namespace headroom::alloc::limits {

// A _dump_snapshot() pickle with stack frames for 100,000 trace entries is ~100-300 MB; the file
// is held whole while its value tree is built, so the file is capped too.
inline constexpr std::uint64_t kMaxSnapshotBytes = std::uint64_t{512} << 20;

// Values (ints, strings, lists, ...) in a snapshot's tree, and items across all its lists and
// dicts. A real pickle holds ~0.3 values per byte (keys and frame strings come from the memo), so
// 2^25 values read a ~100 MB snapshot with frames; a hostile file of one-byte EMPTY_LIST opcodes
// stops there at ~1 GB (16-byte nodes, a 4-byte stack slot, vector growth).
inline constexpr std::size_t kMaxPickleValues = std::size_t{1} << 25;
inline constexpr std::size_t kMaxPickleItems = std::size_t{1} << 26;
// Memo entries whose index is not the next one Python's pickler would use (it numbers 0, 1, 2, ...):
// only a hand-made file has them, each costing a hash-map node.
inline constexpr std::size_t kMaxPickleSparseMemo = std::size_t{1} << 16;

}  // namespace headroom::alloc::limits
