#include "sim/allocator/pickle_reader.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::alloc::pickle {

// ---- Tree -------------------------------------------------------------------------------------

NodeId Tree::add(Node node) {
  if (nodes_.size() >= limits_.values)
    throw TreeFull(fmt::format("more than {} values, above the limit for a snapshot (docs/limits.md)", limits_.values));
  nodes_.push_back(node);
  return static_cast<NodeId>(nodes_.size() - 1);
}

NodeId Tree::add_none() { return add(Node{}); }
NodeId Tree::add_bool(bool value) { return add(Node{Kind::Bool, false, 0, value ? 1u : 0u}); }
NodeId Tree::add_int(std::uint64_t bits, bool negative) { return add(Node{Kind::Int, negative, 0, bits}); }
NodeId Tree::add_float(double value) { return add(Node{Kind::Float, false, 0, std::bit_cast<std::uint64_t>(value)}); }

NodeId Tree::add_text(Kind kind, std::string_view bytes) {
  if (bytes.size() > std::numeric_limits<std::uint32_t>::max()) throw InputError("pickle: string longer than 4 GiB");
  Node n{kind, false, static_cast<std::uint32_t>(bytes.size()), chars_.size()};
  chars_.append(bytes);
  return add(n);
}

NodeId Tree::add_container(Kind kind) { return add(Node{kind, false, 0, kNoItems}); }

void Tree::append(NodeId container, NodeId item) {
  if (++items_ > limits_.items)
    throw TreeFull(fmt::format("more than {} items in lists and dicts, above the limit for a snapshot "
                               "(docs/limits.md)",
                               limits_.items));
  std::uint64_t& index = nodes_[container].payload;
  if (index == kNoItems) {  // the first item: only now does the container get its own vector
    index = containers_.size();
    containers_.emplace_back();
  }
  containers_[index].push_back(item);
}

std::optional<std::int64_t> Tree::int64(NodeId id) const {
  const Node& n = nodes_[id];
  if (n.kind != Kind::Int) return std::nullopt;
  if (!n.negative && n.payload > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(n.payload);
}

std::optional<std::uint64_t> Tree::uint64(NodeId id) const {
  const Node& n = nodes_[id];
  if (n.kind != Kind::Int || n.negative) return std::nullopt;
  return n.payload;
}

double Tree::real(NodeId id) const { return std::bit_cast<double>(nodes_[id].payload); }

std::string_view Tree::text(NodeId id) const {
  const Node& n = nodes_[id];
  return std::string_view(chars_).substr(n.payload, n.length);
}

std::span<const NodeId> Tree::items(NodeId id) const {
  const std::uint64_t index = nodes_[id].payload;
  if (index == kNoItems) return {};
  return containers_[index];
}

std::optional<NodeId> Tree::find(NodeId dict, std::string_view key) const {
  auto kv = items(dict);
  for (std::size_t i = kv.size(); i >= 2; i -= 2) {
    NodeId k = kv[i - 2];
    if (nodes_[k].kind == Kind::Str && text(k) == key) return kv[i - 1];
  }
  return std::nullopt;
}

const char* python_type_name(Kind kind) {
  switch (kind) {
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Str: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::List: return "list";
    case Kind::Tuple: return "tuple";
    case Kind::Dict: return "dict";
  }
  return "?";
}

// ---- Unpickler --------------------------------------------------------------------------------

namespace {

// Opcode bytes (CPython Lib/pickle.py).
enum Op : unsigned char {
  MARK = '(', STOP = '.', POP = '0', POP_MARK = '1', DUP = '2', FLOAT = 'F', INT = 'I', BININT = 'J',
  BININT1 = 'K', LONG = 'L', BININT2 = 'M', NONE = 'N', PERSID = 'P', BINPERSID = 'Q', REDUCE = 'R',
  STRING = 'S', BINSTRING = 'T', SHORT_BINSTRING = 'U', UNICODE = 'V', BINUNICODE = 'X', APPEND = 'a',
  BUILD = 'b', GLOBAL = 'c', DICT = 'd', EMPTY_DICT = '}', APPENDS = 'e', GET = 'g', BINGET = 'h',
  INST = 'i', LONG_BINGET = 'j', LIST = 'l', EMPTY_LIST = ']', OBJ = 'o', PUT = 'p', BINPUT = 'q',
  LONG_BINPUT = 'r', SETITEM = 's', TUPLE = 't', EMPTY_TUPLE = ')', SETITEMS = 'u', BINFLOAT = 'G',
  PROTO = 0x80, NEWOBJ = 0x81, EXT1 = 0x82, EXT2 = 0x83, EXT4 = 0x84, TUPLE1 = 0x85, TUPLE2 = 0x86,
  TUPLE3 = 0x87, NEWTRUE = 0x88, NEWFALSE = 0x89, LONG1 = 0x8a, LONG4 = 0x8b, BINBYTES = 'B',
  SHORT_BINBYTES = 'C', SHORT_BINUNICODE = 0x8c, BINUNICODE8 = 0x8d, BINBYTES8 = 0x8e, EMPTY_SET = 0x8f,
  ADDITEMS = 0x90, FROZENSET = 0x91, NEWOBJ_EX = 0x92, STACK_GLOBAL = 0x93, MEMOIZE = 0x94, FRAME = 0x95,
  BYTEARRAY8 = 0x96, NEXT_BUFFER = 0x97, READONLY_BUFFER = 0x98,
};

const char* op_name(unsigned char op) {
  switch (op) {
    case MARK: return "MARK";
    case STOP: return "STOP";
    case POP: return "POP";
    case POP_MARK: return "POP_MARK";
    case DUP: return "DUP";
    case FLOAT: return "FLOAT";
    case INT: return "INT";
    case BININT: return "BININT";
    case BININT1: return "BININT1";
    case LONG: return "LONG";
    case BININT2: return "BININT2";
    case NONE: return "NONE";
    case PERSID: return "PERSID";
    case BINPERSID: return "BINPERSID";
    case REDUCE: return "REDUCE";
    case STRING: return "STRING";
    case BINSTRING: return "BINSTRING";
    case SHORT_BINSTRING: return "SHORT_BINSTRING";
    case UNICODE: return "UNICODE";
    case BINUNICODE: return "BINUNICODE";
    case APPEND: return "APPEND";
    case BUILD: return "BUILD";
    case GLOBAL: return "GLOBAL";
    case DICT: return "DICT";
    case EMPTY_DICT: return "EMPTY_DICT";
    case APPENDS: return "APPENDS";
    case GET: return "GET";
    case BINGET: return "BINGET";
    case INST: return "INST";
    case LONG_BINGET: return "LONG_BINGET";
    case LIST: return "LIST";
    case EMPTY_LIST: return "EMPTY_LIST";
    case OBJ: return "OBJ";
    case PUT: return "PUT";
    case BINPUT: return "BINPUT";
    case LONG_BINPUT: return "LONG_BINPUT";
    case SETITEM: return "SETITEM";
    case TUPLE: return "TUPLE";
    case EMPTY_TUPLE: return "EMPTY_TUPLE";
    case SETITEMS: return "SETITEMS";
    case BINFLOAT: return "BINFLOAT";
    case PROTO: return "PROTO";
    case NEWOBJ: return "NEWOBJ";
    case EXT1: return "EXT1";
    case EXT2: return "EXT2";
    case EXT4: return "EXT4";
    case TUPLE1: return "TUPLE1";
    case TUPLE2: return "TUPLE2";
    case TUPLE3: return "TUPLE3";
    case NEWTRUE: return "NEWTRUE";
    case NEWFALSE: return "NEWFALSE";
    case LONG1: return "LONG1";
    case LONG4: return "LONG4";
    case BINBYTES: return "BINBYTES";
    case SHORT_BINBYTES: return "SHORT_BINBYTES";
    case SHORT_BINUNICODE: return "SHORT_BINUNICODE";
    case BINUNICODE8: return "BINUNICODE8";
    case BINBYTES8: return "BINBYTES8";
    case EMPTY_SET: return "EMPTY_SET";
    case ADDITEMS: return "ADDITEMS";
    case FROZENSET: return "FROZENSET";
    case NEWOBJ_EX: return "NEWOBJ_EX";
    case STACK_GLOBAL: return "STACK_GLOBAL";
    case MEMOIZE: return "MEMOIZE";
    case FRAME: return "FRAME";
    case BYTEARRAY8: return "BYTEARRAY8";
    case NEXT_BUFFER: return "NEXT_BUFFER";
    case READONLY_BUFFER: return "READONLY_BUFFER";
    default: return nullptr;
  }
}

// Checks that `s` is well-formed UTF-8, so that a malformed string fails here, at its byte
// offset, rather than later in a JSON re-export.
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t extra = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    static constexpr std::uint32_t min_for[] = {0, 0x80, 0x800, 0x10000};
    // Overlong forms, code points past U+10FFFF and lone surrogates (which Python's
    // "surrogatepass" could write) are refused: JSON cannot carry them either.
    if (cp < min_for[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

class Unpickler {
 public:
  Unpickler(std::string_view data, const std::string& where, const ParseLimits& limits)
      : data_(data), where_(where), limits_(limits), tree_(limits) {}

  Tree run() {
    try {
      while (true) {
        op_pos_ = pos_;
        if (pos_ >= data_.size()) truncated(1, "the next opcode");
        auto op = static_cast<unsigned char>(data_[pos_++]);
        op_ = op;
        if (step(op)) break;
      }
    } catch (const TreeFull& e) {
      fail(op_pos_, e.what());
    }
    if (pos_ != data_.size()) {
      const std::size_t extra = data_.size() - pos_;
      fail(pos_, fmt::format("{} byte{} of unexpected data after the pickle's STOP opcode", extra, extra == 1 ? "" : "s"));
    }
    return std::move(tree_);
  }

 private:
  [[noreturn]] void fail(std::size_t offset, const std::string& what) const {
    throw InputError(fmt::format("{}: byte {}: {}", where_, offset, what));
  }
  [[noreturn]] void truncated(std::uint64_t need, const std::string& what) const {
    fail(op_pos_, fmt::format("truncated pickle ({} byte{} needed, {} left, while reading {})", need,
                              need == 1 ? "" : "s", data_.size() - pos_, what));
  }
  [[noreturn]] void malformed(const std::string& what) const {
    fail(op_pos_, fmt::format("malformed pickle: {} {}", op_name(op_), what));
  }

  std::string argument_of() const { return fmt::format("the argument of {}", op_name(op_)); }

  std::string_view take(std::uint64_t n) {
    if (n > data_.size() - pos_) truncated(n, argument_of());
    std::string_view out = data_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }
  std::uint64_t le(std::size_t n) {
    std::string_view b = take(n);
    std::uint64_t v = 0;
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[i]);
    return v;
  }
  std::string_view line() {
    std::size_t end = data_.find('\n', pos_);
    if (end == std::string_view::npos) {
      fail(op_pos_, fmt::format("truncated pickle (the data ends while reading {}, before its newline)", argument_of()));
    }
    std::string_view out = data_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return out;
  }

  void push(NodeId id) {
    if (stack_.size() >= limits_.values) too_many("values on the pickle's stack", limits_.values);
    stack_.push_back(id);
  }
  [[noreturn]] void too_many(const char* what, std::size_t limit) const {
    fail(op_pos_, fmt::format("{}: more than {} {}, above the limit for a snapshot (docs/limits.md)", op_name(op_),
                              limit, what));
  }
  NodeId pop() {
    if (stack_.size() <= floor()) malformed("with nothing on the stack to take");
    NodeId v = stack_.back();
    stack_.pop_back();
    return v;
  }
  NodeId top() {
    if (stack_.size() <= floor()) malformed("with nothing on the stack to work on");
    return stack_.back();
  }
  std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::size_t pop_mark() {
    if (marks_.empty()) malformed("without a preceding MARK");
    std::size_t m = marks_.back();
    marks_.pop_back();
    return m;
  }
  NodeId container_below(std::size_t mark, Kind want) {
    if (mark == 0 || (!marks_.empty() && mark - 1 < marks_.back())) malformed("with no container below its MARK");
    NodeId c = stack_[mark - 1];
    if (tree_.kind(c) != want) {
      malformed(fmt::format("needs a {} below its items, found {}", python_type_name(want),
                            python_type_name(tree_.kind(c))));
    }
    return c;
  }
  void check_key(NodeId key) {
    Kind k = tree_.kind(key);
    if (k == Kind::List || k == Kind::Dict) {
      malformed(fmt::format("uses an unhashable {} as a dict key", python_type_name(k)));
    }
  }
  void add_pairs(NodeId dict, std::size_t from) {
    if ((stack_.size() - from) % 2 != 0) malformed("has an odd number of items (keys and values come in pairs)");
    for (std::size_t i = from; i < stack_.size(); i += 2) {
      check_key(stack_[i]);
      tree_.append(dict, stack_[i]);
      tree_.append(dict, stack_[i + 1]);
    }
    stack_.resize(from);
  }
  NodeId make_sequence(Kind kind, std::size_t from) {
    NodeId c = tree_.add_container(kind);
    for (std::size_t i = from; i < stack_.size(); ++i) tree_.append(c, stack_[i]);
    stack_.resize(from);
    return c;
  }
  // The memo: Python's pickler numbers entries 0, 1, 2, ..., so they live in a vector that grows by
  // one a new entry; any other index (hostile LONG_BINPUT 4000000000) goes to a small hash map
  // instead of growing the vector.
  static constexpr NodeId kUnset = std::numeric_limits<NodeId>::max();
  void memo_put(std::uint64_t index) {
    const NodeId v = top();
    if (index <= memo_dense_.size()) {
      if (index == memo_dense_.size()) {
        if (index >= limits_.values) too_many("memo entries", limits_.values);
        memo_dense_.push_back(kUnset);
      }
      if (memo_dense_[index] == kUnset) ++memo_count_;
      memo_dense_[index] = v;
    } else {
      if (memo_sparse_.size() >= limits_.sparse_memo && !memo_sparse_.count(index))
        too_many("memo entries out of Python's order", limits_.sparse_memo);
      if (memo_sparse_.emplace(index, v).second) ++memo_count_;
      else memo_sparse_[index] = v;
    }
  }
  void memo_get(std::uint64_t index) {
    if (index < memo_dense_.size() && memo_dense_[index] != kUnset) {
      push(memo_dense_[index]);
      return;
    }
    auto it = memo_sparse_.find(index);
    if (it == memo_sparse_.end()) malformed(fmt::format("refers to memo entry {}, which was never stored", index));
    push(it->second);
  }

  // Two's-complement little-endian integer of any width (LONG1/LONG4); must fit [-2^63, 2^64).
  void push_long(std::string_view b) {
    const std::size_t n = b.size();
    if (n == 0) {
      push(tree_.add_int(0, false));
      return;
    }
    const bool negative = (static_cast<unsigned char>(b[n - 1]) & 0x80) != 0;
    std::uint64_t bits = negative ? ~std::uint64_t{0} : 0;
    for (std::size_t i = 0; i < std::min<std::size_t>(n, 8); ++i) {
      bits &= ~(std::uint64_t{0xFF} << (8 * i));
      bits |= std::uint64_t{static_cast<unsigned char>(b[i])} << (8 * i);
    }
    bool fits = true;
    for (std::size_t i = 8; i < n; ++i) {
      if (static_cast<unsigned char>(b[i]) != (negative ? 0xFF : 0x00)) fits = false;
    }
    if (negative && n > 8 && (bits >> 63) == 0) fits = false;  // below -2^63
    if (!fits) fail(op_pos_, fmt::format("{}: integer of {} bytes does not fit in 64 bits", op_name(op_), n));
    push(tree_.add_int(bits, negative));
  }

  // Decimal integer of the text opcodes INT and LONG.
  void push_decimal(std::string_view s) {
    if (!s.empty() && s.back() == 'L') s.remove_suffix(1);  // Python 2 long suffix
    bool negative = !s.empty() && s.front() == '-';
    if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
    std::uint64_t magnitude = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
      fail(op_pos_, fmt::format("{}: '{}' is not a 64-bit integer", op_name(op_), s));
    }
    if (negative && magnitude > (std::uint64_t{1} << 63)) {
      fail(op_pos_, fmt::format("{}: integer does not fit in 64 bits", op_name(op_)));
    }
    push(tree_.add_int(negative ? ~magnitude + 1 : magnitude, negative && magnitude != 0));
  }

  void push_text(Kind kind, std::string_view bytes) {
    if (kind == Kind::Str && !valid_utf8(bytes)) fail(op_pos_, fmt::format("{}: the string is not valid UTF-8", op_name(op_)));
    push(tree_.add_text(kind, bytes));
  }

  [[noreturn]] void refuse(const char* does) const {
    fail(op_pos_, fmt::format("pickle opcode {} {}; snapshots hold plain data only, refusing to load it",
                              op_name(op_), does));
  }

  // Executes one opcode; true at STOP.
  bool step(unsigned char op) {
    switch (op) {
      case PROTO: {
        auto v = static_cast<unsigned char>(take(1)[0]);
        if (v > 5) fail(op_pos_, fmt::format("unsupported pickle protocol {} (this reader knows 0 to 5)", v));
        return false;
      }
      case FRAME: {
        std::uint64_t n = le(8);
        // Frames only group opcodes for buffered reading; a frame longer than the rest of the data
        // means the file was cut short.
        if (n > data_.size() - pos_) truncated(n, "a FRAME");
        return false;
      }
      case STOP:
        tree_.set_root(pop());
        return true;
      case MARK:
        if (marks_.size() >= limits_.values) too_many("open MARKs", limits_.values);
        marks_.push_back(stack_.size());
        return false;
      case POP: pop(); return false;
      case POP_MARK: stack_.resize(pop_mark()); return false;
      case DUP: push(top()); return false;
      case NONE: push(tree_.add_none()); return false;
      case NEWTRUE: push(tree_.add_bool(true)); return false;
      case NEWFALSE: push(tree_.add_bool(false)); return false;
      case BININT1: push(tree_.add_int(le(1), false)); return false;
      case BININT2: push(tree_.add_int(le(2), false)); return false;
      case BININT: {
        auto v = static_cast<std::int32_t>(static_cast<std::uint32_t>(le(4)));
        push(tree_.add_int(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)), v < 0));
        return false;
      }
      case LONG1: push_long(take(le(1))); return false;
      case LONG4: {
        auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(le(4)));
        if (n < 0) malformed("has a negative length");
        push_long(take(static_cast<std::uint64_t>(n)));
        return false;
      }
      case INT: {
        std::string_view s = line();
        if (s == "01") push(tree_.add_bool(true));  // protocol 0 spelling of True/False
        else if (s == "00") push(tree_.add_bool(false));
        else push_decimal(s);
        return false;
      }
      case LONG: push_decimal(line()); return false;
      case BINFLOAT: {
        std::uint64_t be = 0;
        for (char c : take(8)) be = (be << 8) | static_cast<unsigned char>(c);  // big-endian
        push(tree_.add_float(std::bit_cast<double>(be)));
        return false;
      }
      case FLOAT: {
        std::string_view s = line();
        double v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size()) fail(op_pos_, fmt::format("FLOAT: '{}' is not a number", s));
        push(tree_.add_float(v));
        return false;
      }
      case SHORT_BINUNICODE: push_text(Kind::Str, take(le(1))); return false;
      case BINUNICODE: push_text(Kind::Str, take(le(4))); return false;
      case BINUNICODE8: push_text(Kind::Str, take(le(8))); return false;
      case SHORT_BINBYTES: push_text(Kind::Bytes, take(le(1))); return false;
      case BINBYTES: push_text(Kind::Bytes, take(le(4))); return false;
      case BINBYTES8: push_text(Kind::Bytes, take(le(8))); return false;
      case EMPTY_DICT: push(tree_.add_container(Kind::Dict)); return false;
      case EMPTY_LIST: push(tree_.add_container(Kind::List)); return false;
      case EMPTY_TUPLE: push(tree_.add_container(Kind::Tuple)); return false;
      case TUPLE1:
      case TUPLE2:
      case TUPLE3: {
        std::size_t n = static_cast<std::size_t>(op - TUPLE1) + 1;
        if (stack_.size() < floor() + n) malformed(fmt::format("needs {} items on the stack", n));
        push(make_sequence(Kind::Tuple, stack_.size() - n));
        return false;
      }
      case TUPLE: {
        std::size_t m = pop_mark();
        push(make_sequence(Kind::Tuple, m));
        return false;
      }
      case LIST: {
        std::size_t m = pop_mark();
        push(make_sequence(Kind::List, m));
        return false;
      }
      case DICT: {
        std::size_t m = pop_mark();
        NodeId d = tree_.add_container(Kind::Dict);
        add_pairs(d, m);
        push(d);
        return false;
      }
      case APPEND: {
        NodeId v = pop();
        NodeId list = top();
        if (tree_.kind(list) != Kind::List) malformed(fmt::format("needs a list below its item, found {}", python_type_name(tree_.kind(list))));
        tree_.append(list, v);
        return false;
      }
      case APPENDS: {
        std::size_t m = pop_mark();
        NodeId list = container_below(m, Kind::List);
        for (std::size_t i = m; i < stack_.size(); ++i) tree_.append(list, stack_[i]);
        stack_.resize(m);
        return false;
      }
      case SETITEM: {
        NodeId v = pop();
        NodeId k = pop();
        NodeId d = top();
        if (tree_.kind(d) != Kind::Dict) malformed(fmt::format("needs a dict below its key and value, found {}", python_type_name(tree_.kind(d))));
        check_key(k);
        tree_.append(d, k);
        tree_.append(d, v);
        return false;
      }
      case SETITEMS: {
        std::size_t m = pop_mark();
        add_pairs(container_below(m, Kind::Dict), m);
        return false;
      }
      case MEMOIZE: memo_put(memo_count_); return false;  // index len(memo), as in Python
      case BINPUT: memo_put(le(1)); return false;
      case LONG_BINPUT: memo_put(le(4)); return false;
      case BINGET: memo_get(le(1)); return false;
      case LONG_BINGET: memo_get(le(4)); return false;
      case PUT:
      case GET: {
        std::string_view s = line();
        std::uint64_t index = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), index);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size()) malformed(fmt::format("has a bad memo index '{}'", s));
        if (op == PUT) memo_put(index);
        else memo_get(index);
        return false;
      }
      case GLOBAL:
      case STACK_GLOBAL:
      case INST:
      case EXT1:
      case EXT2:
      case EXT4: refuse("names a Python global");
      case REDUCE:
      case BUILD:
      case OBJ:
      case NEWOBJ:
      case NEWOBJ_EX: refuse("builds a Python object");
      case PERSID:
      case BINPERSID: refuse("refers to a persistent object");
      default:
        break;
    }
    if (const char* name = op_name(op)) {
      fail(op_pos_, fmt::format("pickle opcode {} is not supported (a snapshot holds only dicts, lists, tuples, "
                                "strings, numbers, booleans and None)", name));
    }
    fail(op_pos_, fmt::format("unknown pickle opcode 0x{:02x} (not a pickle, or a newer protocol than 5)", op));
  }

  std::string_view data_;
  const std::string& where_;
  ParseLimits limits_;
  std::size_t pos_ = 0;
  std::size_t op_pos_ = 0;
  unsigned char op_ = 0;
  Tree tree_;
  std::vector<NodeId> stack_;
  std::vector<std::size_t> marks_;
  std::vector<NodeId> memo_dense_;
  std::unordered_map<std::uint64_t, NodeId> memo_sparse_;  // looked up only, never iterated
  std::uint64_t memo_count_ = 0;
};

}  // namespace

Tree parse(std::string_view bytes, const std::string& where, const ParseLimits& limits) {
  return Unpickler(bytes, where, limits).run();
}

}  // namespace headroom::alloc::pickle
