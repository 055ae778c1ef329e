#pragma once
// Internal pieces shared by the snapshot readers (pickle, JSON) and writers.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/allocator/pickle_reader.hpp"
#include "sim/allocator/snapshot.hpp"

namespace headroom::alloc {

// Which file format a value tree came from: error messages use that format's type names
// (Python's "str", "dict" or JSON's "string", "object").
enum class TreeSource { Pickle, Json };

// Maps the value tree of a snapshot onto the Snapshot structs, checking every field's type.
// Errors name the field's path, e.g. "FILE: segments[3].blocks[0].size: expected an integer, got str".
Snapshot snapshot_from_tree(const pickle::Tree& tree, const std::string& where, TreeSource source);

// roundup_power2_divisions in the order PyTorch writes it: by size, "1", "2", ..., "32768" MiB
// (the std::map holds them in text order). Keys that are not numbers come last.
inline std::vector<std::pair<std::string, std::int64_t>> roundup_in_size_order(const AllocatorSettingsRecord& r) {
  std::vector<std::pair<std::string, std::int64_t>> out(r.roundup_power2_divisions.begin(),
                                                        r.roundup_power2_divisions.end());
  auto numeric = [](const std::string& s) {
    return !s.empty() && s.size() < 19 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& x, const auto& y) {
    const bool nx = numeric(x.first), ny = numeric(y.first);
    if (nx != ny) return nx;
    if (!nx) return false;  // text order kept
    return std::stoll(x.first) < std::stoll(y.first);
  });
  return out;
}

}  // namespace headroom::alloc
