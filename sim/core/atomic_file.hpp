#pragma once
// Output files are written to a temporary beside the target and renamed over it when complete, so a
// failed or interrupted run never leaves a partial file (docs/guarantees.md). The temporary,
// "<name>.tmp-<12 random hex digits>", is created with O_CREAT|O_EXCL|O_NOFOLLOW in the target's
// folder: nothing planted there in advance (a symbolic link at a guessed name, in a shared folder) is
// ever opened or written through. It is removed on every exit path: an exception, an early return,
// and SIGINT/SIGTERM/SIGHUP (sim/core/signal_cleanup.hpp). Write errors name the file and the
// system's reason ("No space left on device").
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/signal_cleanup.hpp"

namespace headroom {

// Creates `dir` (and its parents) for a command's outputs; throws InputError naming it and why not
// (a regular file in the way, no permission).
void create_output_folder(const std::filesystem::path& dir);

// A file written under a temporary name and renamed into place by commit(); destroyed without
// commit(), it removes the temporary. Throws InputError naming `path` when the temporary cannot be
// created (no folder, no permission) or a write fails.
class AtomicOutputFile {
 public:
  explicit AtomicOutputFile(std::filesystem::path path);
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;
  std::ostream& stream() { return *out_; }
  // Flushes and closes the temporary; throws (with the system's reason) when any write failed.
  void finish();
  // finish(), then renames the temporary over `path`.
  void commit();
  const std::filesystem::path& path() const { return path_; }

 private:
  class Buffer;
  std::filesystem::path path_, tmp_;
  std::unique_ptr<Buffer> buf_;
  std::unique_ptr<std::ostream> out_;
  RemoveOnSignal on_signal_;
  bool finished_ = false, committed_ = false;
};

// Calls `write` with a stream onto a temporary, then renames it to `path`. `binary` is kept for the
// callers' sake: POSIX writes bytes as they are either way.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                           bool binary = false);

// One command's outputs, staged: each is written to its temporary as it is added, and commit()
// renames them into place, in the order added, only once every one is written: a failure while
// writing (a full disk) leaves every target as it was. A destroyed, uncommitted set removes its
// temporaries.
class StagedOutputs {
 public:
  void add(const std::filesystem::path& path, std::string_view text);
  // A file written by `write` onto its temporary (a large output streamed, not first built whole).
  void add(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);
  // A file streamed elsewhere (e.g. one row per finished request), committed with the others.
  void adopt(AtomicOutputFile& file);
  void commit();

 private:
  std::vector<std::unique_ptr<AtomicOutputFile>> owned_;
  std::vector<AtomicOutputFile*> order_;
};

}  // namespace headroom
