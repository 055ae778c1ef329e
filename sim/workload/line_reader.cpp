#include "sim/workload/line_reader.hpp"

#include <cerrno>
#include <cstring>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"

namespace headroom::workload {

LineReader::LineReader(const std::filesystem::path& path)
    : name_(path.string()), buffer_(new char[kBufferBytes]) {
  if (std::filesystem::is_directory(path)) throw InputError(name_ + ": cannot open (it is a directory)");
  refuse_special_file(path, "trace or lengths file");
  file_ = std::fopen(name_.c_str(), "rb");
  if (!file_) throw InputError(name_ + ": cannot open (" + std::strerror(errno) + ")");
}

LineReader::~LineReader() {
  if (file_) std::fclose(file_);
}

std::string LineReader::where() const { return name_ + ":" + std::to_string(line_number_); }

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == kBufferBytes) return false;
  const std::size_t n = std::fread(buffer_.get() + end_, 1, kBufferBytes - end_, file_);
  if (n == 0) {
    if (std::ferror(file_)) throw InputError(name_ + ": read error (" + std::strerror(errno) + ")");
    eof_ = true;
    return false;
  }
  end_ += n;
  return true;
}

void LineReader::unread() {
  begin_ = last_begin_;
  --line_number_;
}

bool LineReader::next(std::string_view& line) {
  std::size_t scanned = begin_;  // bytes already searched for '\n'
  for (;;) {
    const void* nl = std::memchr(buffer_.get() + scanned, '\n', end_ - scanned);
    if (nl) {
      const std::size_t stop = static_cast<std::size_t>(static_cast<const char*>(nl) - buffer_.get());
      line = std::string_view(buffer_.get() + begin_, stop - begin_);
      last_begin_ = begin_;
      begin_ = stop + 1;
      break;
    }
    const std::size_t searched = end_ - begin_;
    if (!fill()) {
      if (end_ - begin_ == kBufferBytes) {
        ++line_number_;
        throw InputError(where() + ": line is longer than " + std::to_string(kBufferBytes) + " bytes");
      }
      if (begin_ == end_) return false;
      line = std::string_view(buffer_.get() + begin_, end_ - begin_);  // last line, no terminator
      last_begin_ = begin_;
      begin_ = end_;
      break;
    }
    scanned = begin_ + searched;
  }
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line_number_ == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  if (line_number_ == 1 && (line.starts_with("\xFF\xFE") || line.starts_with("\xFE\xFF")))
    throw InputError(where() + ": UTF-16 or UTF-32 text (a byte-order mark); traces must be UTF-8 (or ASCII)");
  return true;
}

}  // namespace headroom::workload
