#pragma once
// Output files are written to a temporary name beside the target and renamed when complete,
// so a failed run never leaves a partial file behind.
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>

namespace headroom {

// Creates `dir` (and its parents) for a command's outputs; throws InputError naming it and why not
// (a regular file in the way, no permission).
void create_output_folder(const std::filesystem::path& dir);

// Calls `write` with a stream onto "<path>.tmp-<pid>", then renames it to `path`.
// Throws InputError (naming the path) when the folder is not writable; removes the temporary on failure.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                           bool binary = false);

// A file written progressively (e.g. one row per finished request) under a temporary name and
// renamed into place by commit(); destroyed without commit(), it removes the temporary.
class AtomicOutputFile {
 public:
  explicit AtomicOutputFile(std::filesystem::path path);
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;
  std::ostream& stream() { return out_; }
  void commit();

 private:
  std::filesystem::path path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace headroom
