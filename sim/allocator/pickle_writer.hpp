#pragma once
// Writes plain data (dicts, lists, tuples, ints, floats, strs, bools, None) as a protocol-4 pickle
// using only opcodes that both Python's unpickler and PyTorch's memory viewer understand (the
// viewer's own unpickler in torch/utils/viz/MemoryViz.js knows PROTO 2-4, EMPTY_DICT/LIST/TUPLE,
// MARK, SETITEMS, APPENDS, TUPLE2, BININT/BININT1/BININT2, LONG1, BINFLOAT, SHORT_BINUNICODE,
// BINUNICODE, NONE, NEWTRUE/NEWFALSE, MEMOIZE, BINGET/LONG_BINGET and STOP, but neither LONG4
// nor bytes). No FRAME opcodes: framing is optional when the whole pickle is in memory.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::alloc::pickle {

class Writer {
 public:
  Writer();  // writes PROTO 4

  void none();
  void boolean(bool value);
  void integer(std::int64_t value);
  void unsigned_integer(std::uint64_t value);
  void real(double value);
  void str(std::string_view utf8);  // repeated strings are written once and fetched from the memo

  // Containers: begin, then for each element item() (lists) or key() (dicts) followed by the
  // value, then end(). Items go in batches of 1000 per APPENDS/SETITEMS as Python writes them
  // (the viewer spreads each batch into a JavaScript call, which has an argument limit).
  void begin_list();
  void begin_dict();
  void item();
  void key(std::string_view name);
  void end();
  void pair(std::int64_t first, std::int64_t second);  // a 2-tuple of ints

  // Appends STOP and returns the bytes; the writer is spent afterwards.
  std::string finish();

 private:
  struct Open {
    bool dict;
    std::size_t in_batch;
  };
  void op(unsigned char code) { out_.push_back(static_cast<char>(code)); }
  void le(std::uint64_t value, int bytes);
  void next_element();

  std::string out_;
  std::vector<Open> open_;
  std::map<std::string, std::uint32_t, std::less<>> memo_;  // str -> memo index
};

}  // namespace headroom::alloc::pickle
