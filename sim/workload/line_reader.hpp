#pragma once
// Reads a text file one line at a time through one fixed buffer, so that memory use does not
// depend on the file's size. Lines end in \n or \r\n; a UTF-8 byte-order mark on the first line
// is dropped.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace headroom::workload {

class LineReader {
 public:
  // The longest line accepted. A Mooncake row for a 1M-token prompt (1,954 hash ids) is about
  // 16 KB, so 1 MiB leaves a wide margin.
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

  // Throws InputError "PATH: cannot open (REASON)".
  explicit LineReader(const std::filesystem::path& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its terminator; valid until the next call. False at the end of the
  // file. Throws InputError "PATH:LINE: line is longer than 1048576 bytes" or on a read error.
  bool next(std::string_view& line);

  // Makes the line last returned the next one again (once), e.g. after looking at the first
  // line of a file whose first line is already data.
  void unread();

  // 1-based number of the line last returned.
  std::uint64_t line_number() const { return line_number_; }
  // The path as given, for messages.
  const std::string& name() const { return name_; }
  // "PATH:LINE" of the line last returned.
  std::string where() const;

 private:
  bool fill();  // moves the unread tail to the front and reads more; false when nothing was added

  std::string name_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<char[]> buffer_;
  std::size_t begin_ = 0, end_ = 0;
  std::size_t last_begin_ = 0;  // where the line last returned starts
  bool eof_ = false;
  std::uint64_t line_number_ = 0;
};

}  // namespace headroom::workload
