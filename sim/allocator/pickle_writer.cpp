#include "sim/allocator/pickle_writer.hpp"

#include <bit>
#include <stdexcept>

namespace headroom::alloc::pickle {

namespace {
// Opcode bytes (CPython Lib/pickle.py).
constexpr unsigned char PROTO = 0x80, STOP = '.', MARK = '(', NONE = 'N', NEWTRUE = 0x88, NEWFALSE = 0x89,
                        BININT = 'J', BININT1 = 'K', BININT2 = 'M', LONG1 = 0x8a, BINFLOAT = 'G',
                        SHORT_BINUNICODE = 0x8c, BINUNICODE = 'X', EMPTY_DICT = '}', EMPTY_LIST = ']',
                        APPENDS = 'e', SETITEMS = 'u', TUPLE2 = 0x86, MEMOIZE = 0x94, BINGET = 'h',
                        LONG_BINGET = 'j';
constexpr std::size_t kBatch = 1000;  // CPython pickle._BATCHSIZE
}  // namespace

Writer::Writer() {
  op(PROTO);
  op(4);
}

void Writer::le(std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

void Writer::none() { op(NONE); }
void Writer::boolean(bool value) { op(value ? NEWTRUE : NEWFALSE); }

void Writer::integer(std::int64_t value) {
  if (value >= 0) {
    unsigned_integer(static_cast<std::uint64_t>(value));
    return;
  }
  if (value >= INT32_MIN) {
    op(BININT);
    le(static_cast<std::uint64_t>(value), 4);
    return;
  }
  // Shortest two's complement that keeps the sign bit set (CPython pickle.encode_long).
  auto bits = static_cast<std::uint64_t>(value);
  int n = 8;
  while (n > 1 && ((bits >> (8 * (n - 1))) & 0xFF) == 0xFF && ((bits >> (8 * (n - 2))) & 0x80) != 0) --n;
  op(LONG1);
  op(static_cast<unsigned char>(n));
  le(bits, n);
}

void Writer::unsigned_integer(std::uint64_t value) {
  if (value < 0x100) {
    op(BININT1);
    le(value, 1);
  } else if (value < 0x10000) {
    op(BININT2);
    le(value, 2);
  } else if (value <= 0x7FFFFFFF) {
    op(BININT);
    le(value, 4);
  } else {
    // Little-endian bytes plus a zero byte when the top bit is set, so it does not read as negative.
    int n = 8 - std::countl_zero(value) / 8;
    if ((value >> (8 * n - 1)) & 1) ++n;
    op(LONG1);
    op(static_cast<unsigned char>(n));
    le(value, std::min(n, 8));
    if (n == 9) out_.push_back('\0');
  }
}

void Writer::real(double value) {
  op(BINFLOAT);
  auto bits = std::bit_cast<std::uint64_t>(value);
  for (int i = 7; i >= 0; --i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));  // big-endian
}

void Writer::str(std::string_view utf8) {
  if (auto it = memo_.find(utf8); it != memo_.end()) {
    if (it->second < 0x100) {
      op(BINGET);
      le(it->second, 1);
    } else {
      op(LONG_BINGET);
      le(it->second, 4);
    }
    return;
  }
  if (utf8.size() < 0x100) {
    op(SHORT_BINUNICODE);
    le(utf8.size(), 1);
  } else {
    if (utf8.size() > 0xFFFFFFFFu) throw std::length_error("pickle writer: string longer than 4 GiB");
    op(BINUNICODE);
    le(utf8.size(), 4);
  }
  out_.append(utf8);
  // MEMOIZE stores under index len(memo); only strings are memoized, so the indices are dense.
  op(MEMOIZE);
  memo_.emplace(std::string(utf8), static_cast<std::uint32_t>(memo_.size()));
}

void Writer::begin_list() {
  op(EMPTY_LIST);
  open_.push_back({false, 0});
}

void Writer::begin_dict() {
  op(EMPTY_DICT);
  open_.push_back({true, 0});
}

void Writer::next_element() {
  Open& c = open_.back();
  if (c.in_batch == kBatch) {
    op(c.dict ? SETITEMS : APPENDS);
    c.in_batch = 0;
  }
  if (c.in_batch == 0) op(MARK);
  ++c.in_batch;
}

void Writer::item() { next_element(); }

void Writer::key(std::string_view name) {
  next_element();
  str(name);
}

void Writer::end() {
  const Open c = open_.back();
  open_.pop_back();
  if (c.in_batch > 0) op(c.dict ? SETITEMS : APPENDS);
}

void Writer::pair(std::int64_t first, std::int64_t second) {
  integer(first);
  integer(second);
  op(TUPLE2);
}

std::string Writer::finish() {
  op(STOP);
  return std::move(out_);
}

}  // namespace headroom::alloc::pickle
