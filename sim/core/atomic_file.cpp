#include "sim/core/atomic_file.hpp"

#include <fstream>
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

}  // namespace

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

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                           bool binary) {
  namespace fs = std::filesystem;
  require_file_name(path);
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
  require_file_name(path_);
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
