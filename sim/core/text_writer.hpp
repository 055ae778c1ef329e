#pragma once
// Text formatted straight into one buffer and handed to a stream in large chunks, for the outputs
// that grow with the run (requests.csv, the timelines, report.html's data): each row is formatted
// with fmt into the buffer (a compiled format, FMT_COMPILE, parsed once at build time), so a row
// costs no string of its own, no allocation and no stream call. Without a stream the text stays in
// memory (text()), for an output a report is also drawn from before it is written.
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

#include <fmt/compile.h>
#include <fmt/format.h>

namespace headroom {

class TextWriter {
 public:
  TextWriter() = default;  // kept in memory
  explicit TextWriter(std::ostream& out) : out_(&out) {}
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;
  ~TextWriter() { flush(); }

  // fmt::format_to with a compiled format: `w.print(FMT_COMPILE("{},{}\n"), a, b)`.
  template <class Format, class... Args>
  void print(const Format& format, const Args&... args) {
    fmt::format_to(fmt::appender(buf_), format, args...);
    if (out_ && buf_.size() >= kChunk) flush();
  }
  void write(std::string_view text) {
    buf_.append(text.data(), text.data() + text.size());
    if (out_ && buf_.size() >= kChunk) flush();
  }
  void put(char c) { buf_.push_back(c); }
  // Hands what is buffered to the stream (nothing without one). The stream keeps the first error
  // (AtomicOutputFile::finish reports it).
  void flush() {
    if (!out_ || buf_.size() == 0) return;
    out_->write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  // The text kept in memory (a writer without a stream).
  std::string_view view() const { return {buf_.data(), buf_.size()}; }
  std::string text() const { return std::string(view()); }

 private:
  // Large enough that the stream's buffer passes it through in one write (AtomicOutputFile's is
  // 64 KiB), small enough to stay in cache.
  static constexpr std::size_t kChunk = std::size_t{1} << 16;

  std::ostream* out_ = nullptr;
  fmt::memory_buffer buf_;
};

}  // namespace headroom
