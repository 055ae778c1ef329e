#include "sim/core/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <streambuf>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom {

namespace {

// An output path that names a folder: the rename would fail only after all the work was done.
void require_file_name(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a folder; expected the name of a file to write", path.string()));
}

// 48 random bits as 12 hex digits: a name no one can plant a link at in advance (O_EXCL refuses one
// anyway; the randomness keeps such a plant from blocking the run).
std::string random_suffix() {
  std::random_device rd;
  const std::uint64_t bits = (static_cast<std::uint64_t>(rd()) << 32 | rd()) & 0xFFFF'FFFF'FFFFull;
  return fmt::format("{:012x}", bits);
}

}  // namespace

// A stream buffer onto a file descriptor that keeps the errno of the first failed write, so that the
// error can say why ("No space left on device"); std::ofstream forgets it.
class AtomicOutputFile::Buffer : public std::streambuf {
 public:
  explicit Buffer(int fd) : fd_(fd), data_(new char[kSize]) { setp(data_.get(), data_.get() + kSize); }
  ~Buffer() override { close_fd(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  int error() const { return error_; }
  // Closes the descriptor (a network file system may report a failed write only here).
  void close_fd() {
    if (fd_ < 0) return;
    if (::close(fd_) != 0 && error_ == 0 && errno != EINTR) error_ = errno;
    fd_ = -1;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n < static_cast<std::streamsize>(kSize)) return std::streambuf::xsputn(s, n);
    if (!drain() || !write_all(s, static_cast<std::size_t>(n))) return 0;
    return n;
  }

 private:
  static constexpr std::size_t kSize = 1 << 16;

  bool write_all(const char* p, std::size_t n) {
    while (n > 0 && error_ == 0) {
      if (fd_ < 0) {
        error_ = EBADF;
        break;
      }
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno != EINTR) error_ = errno;
        continue;
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return error_ == 0;
  }
  bool drain() {
    const bool ok = write_all(pbase(), static_cast<std::size_t>(pptr() - pbase()));
    setp(data_.get(), data_.get() + kSize);  // after a failure the rest is dropped: the file is lost anyway
    return ok;
  }

  int fd_;
  std::unique_ptr<char[]> data_;
  int error_ = 0;
};

void create_output_folder(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!ec && fs::is_directory(dir)) return;
  // The reason as the system says it; a file where a folder should be is the usual one.
  std::string why = ec ? ec.message() : "it is not a folder";
  for (fs::path p = dir; !p.empty() && p != p.parent_path(); p = p.parent_path())
    if (fs::exists(p, ec) && !fs::is_directory(p, ec)) {
      why = p == dir ? std::string("a file of that name is in the way") : fmt::format("'{}' is a file, not a folder", p.string());
      break;
    }
  throw InputError(fmt::format("{}: cannot create the output folder ({})", dir.string(), why));
}

AtomicOutputFile::AtomicOutputFile(std::filesystem::path path) : path_(std::move(path)) {
  require_file_name(path_);
  // Registered before it exists, so that no signal can come between creating it and registering it.
  for (int attempt = 0;; ++attempt) {
    tmp_ = path_;
    tmp_ += ".tmp-" + random_suffix();
    on_signal_.watch(tmp_);
    const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      buf_ = std::make_unique<Buffer>(fd);
      out_ = std::make_unique<std::ostream>(buf_.get());
      return;
    }
    const int err = errno;
    on_signal_.release();
    if (err == EEXIST && attempt < 100) continue;  // someone else's file at that name: never touched
    throw InputError(fmt::format("{}: cannot write (is the folder there and writable?): {}", path_.string(),
                                 std::strerror(err)));
  }
}

AtomicOutputFile::~AtomicOutputFile() {
  if (committed_ || !buf_) return;
  buf_->close_fd();
  ::unlink(tmp_.c_str());
}

void AtomicOutputFile::finish() {
  if (finished_) return;
  out_->flush();
  buf_->close_fd();
  finished_ = true;
  if (buf_->error() != 0)
    throw InputError(fmt::format("{}: write failed: {}", path_.string(), std::strerror(buf_->error())));
  if (!*out_) throw InputError(fmt::format("{}: write failed", path_.string()));
}

void AtomicOutputFile::commit() {
  if (committed_) return;
  finish();
  if (::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw InputError(fmt::format("{}: cannot rename the finished output into place: {}", path_.string(),
                                 std::strerror(errno)));
  committed_ = true;
  on_signal_.release();
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                           bool /*binary*/) {
  AtomicOutputFile file(path);
  write(file.stream());
  file.commit();
}

void StagedOutputs::add(const std::filesystem::path& path, std::string_view text) {
  owned_.push_back(std::make_unique<AtomicOutputFile>(path));
  owned_.back()->stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  order_.push_back(owned_.back().get());
}

void StagedOutputs::add(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  owned_.push_back(std::make_unique<AtomicOutputFile>(path));
  write(owned_.back()->stream());
  order_.push_back(owned_.back().get());
}

void StagedOutputs::adopt(AtomicOutputFile& file) { order_.push_back(&file); }

void StagedOutputs::commit() {
  for (AtomicOutputFile* f : order_) f->finish();
  // No signal cuts the renames apart (the run's other threads have ended by now); one that comes
  // meanwhile ends the process once every file is in place.
  const DeferSignals defer;
  for (AtomicOutputFile* f : order_) f->commit();
}

}  // namespace headroom
