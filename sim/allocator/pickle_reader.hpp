#pragma once
// A data-only unpickler: turns the bytes of a Python pickle (protocols 2-5, as written by
// `pickle.dump` of plain dicts, lists, tuples, ints, floats, strs, bytes, bools and None) into a
// value tree. Every opcode that names a Python global or builds an object (GLOBAL,
// STACK_GLOBAL, REDUCE, BUILD, ...) is refused, so loading a file never runs anything.
// Opcode meanings: CPython Lib/pickletools.py.
//
// The tree lives in one arena and nodes refer to each other by index: a hostile pickle
// (millions of nested lists, a list that contains itself through the memo) can neither overflow
// the stack when the tree is freed nor leak. Every opcode creates at most one node, an empty list
// or dict costs no more than any other node, and the counts of values, items, stack slots and memo
// entries are capped (snapshot_limits.hpp), so memory is linear in the input and bounded.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/allocator/snapshot_limits.hpp"

namespace headroom::alloc::pickle {

enum class Kind : std::uint8_t { None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict };

using NodeId = std::uint32_t;

// The caps of snapshot_limits.hpp (smaller ones in tests).
struct ParseLimits {
  std::size_t values = limits::kMaxPickleValues;      // tree nodes, stack slots, MARKs, memo entries
  std::size_t items = limits::kMaxPickleItems;        // items across all lists and dicts
  std::size_t sparse_memo = limits::kMaxPickleSparseMemo;
};

class Tree {
 public:
  explicit Tree(const ParseLimits& limits = {}) : limits_(limits) {
    if (limits_.values >= std::numeric_limits<NodeId>::max()) limits_.values = std::numeric_limits<NodeId>::max() - 1;
  }
  Kind kind(NodeId id) const { return nodes_[id].kind; }
  std::size_t size() const { return nodes_.size(); }
  NodeId root() const { return root_; }

  bool boolean(NodeId id) const { return nodes_[id].payload != 0; }
  // Integers span [-2^63, 2^64): PyTorch writes addresses and sizes as Python ints.
  bool int_negative(NodeId id) const { return nodes_[id].negative; }
  std::optional<std::int64_t> int64(NodeId id) const;
  std::optional<std::uint64_t> uint64(NodeId id) const;
  std::uint64_t int_bits(NodeId id) const { return nodes_[id].payload; }  // two's complement
  double real(NodeId id) const;
  std::string_view text(NodeId id) const;  // Str (UTF-8) or Bytes
  // List and Tuple: the items. Dict: key, value, key, value, ... in insertion order.
  std::span<const NodeId> items(NodeId id) const;
  // The value under a string key of a dict (the last one when a key repeats, as in Python).
  std::optional<NodeId> find(NodeId dict, std::string_view key) const;

  // Building (the unpickler and the JSON reader).
  NodeId add_none();
  NodeId add_bool(bool value);
  NodeId add_int(std::uint64_t twos_complement_bits, bool negative);
  NodeId add_float(double value);
  NodeId add_text(Kind kind, std::string_view bytes);  // Str or Bytes
  NodeId add_container(Kind kind);                     // List, Tuple or Dict, empty
  void append(NodeId container, NodeId item);
  void set_root(NodeId id) { root_ = id; }

 private:
  struct Node {
    Kind kind = Kind::None;
    bool negative = false;    // Int below zero
    std::uint32_t length = 0;  // Str/Bytes: byte count
    std::uint64_t payload = 0;  // Bool, Int bits, Float bits, text offset, container index
  };
  static constexpr std::uint64_t kNoItems = ~std::uint64_t{0};  // a container's payload until its first item
  NodeId add(Node node);
  ParseLimits limits_;
  std::vector<Node> nodes_;
  std::size_t items_ = 0;
  std::string chars_;
  std::vector<std::vector<NodeId>> containers_;
  NodeId root_ = 0;
};

// Thrown by Tree when the input holds more than snapshot_limits.hpp allows; the reader adds where.
class TreeFull : public std::length_error {
 public:
  using std::length_error::length_error;
};

// Python's name for the type of a node ("int", "str", "dict", ...), as error messages use it.
const char* python_type_name(Kind kind);

// Parses a whole pickle. Throws InputError "WHERE: byte N: ..." on a refused opcode, an unknown
// opcode, truncated or malformed data, or bytes after the STOP opcode.
Tree parse(std::string_view bytes, const std::string& where, const ParseLimits& limits = {});

}  // namespace headroom::alloc::pickle
