#include "sim/core/atomic_file.hpp"

#include <fstream>
#include <system_error>
#include <unistd.h>

#include "sim/core/error.hpp"

namespace headroom {

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                           bool binary) {
  namespace fs = std::filesystem;
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, binary ? std::ios::binary | std::ios::trunc : std::ios::trunc);
    if (!out) throw InputError(path.string() + ": cannot write (is the folder there and writable?)");
    try {
      write(out);
      out.flush();
      if (!out) throw InputError(path.string() + ": write failed");
    } catch (...) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(path.string() + ": cannot rename the finished output into place");
  }
}

AtomicOutputFile::AtomicOutputFile(std::filesystem::path path) : path_(std::move(path)) {
  tmp_ = path_;
  tmp_ += ".tmp-" + std::to_string(::getpid());
  out_.open(tmp_, std::ios::trunc);
  if (!out_) throw InputError(path_.string() + ": cannot write (is the folder there and writable?)");
}

AtomicOutputFile::~AtomicOutputFile() {
  if (committed_) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void AtomicOutputFile::commit() {
  out_.flush();
  if (!out_) throw InputError(path_.string() + ": write failed");
  out_.close();
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) throw InputError(path_.string() + ": cannot rename the finished output into place");
  committed_ = true;
}

}  // namespace headroom
