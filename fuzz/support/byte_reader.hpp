#pragma once
// Reads small integers from the front of a fuzz input, one operation's choices at a time; past the
// end every read gives 0, so any input decodes.
#include <cstddef>
#include <cstdint>

namespace headroom::fuzz {

class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // Little-endian, `bytes` wide (at most 8).
  std::uint64_t integer(int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t{byte()} << (8 * i);
    return v;
  }
  // An index in [0, n) for n > 0.
  std::size_t index(std::size_t n) { return static_cast<std::size_t>(integer(2) % n); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace headroom::fuzz
