#pragma once
// A command's hold on its output folder for the whole run (issue 14): two runs writing into one
// folder at once would leave it mixing their files. The lock is DIR/.headroom.lock, created with
// O_EXCL|O_NOFOLLOW and held with flock(): the file says who holds it (pid, host, start time,
// command line) so that a second run is refused naming the holder, and the kernel drops the flock
// when the holder ends however it ends (SIGKILL, a crash, a lost machine), so a lock left behind is
// recognised as stale and taken over rather than honoured forever. docs/guarantees.md.
#include <filesystem>
#include <string>

#include "sim/core/signal_cleanup.hpp"

namespace headroom {

inline constexpr const char* kOutputLockName = ".headroom.lock";

class OutputFolderLock {
 public:
  // Takes the lock of `dir` (which must exist), or throws InputError naming the holder.
  explicit OutputFolderLock(const std::filesystem::path& dir);
  // Removes the lock file, then lets go of it.
  ~OutputFolderLock();
  OutputFolderLock(const OutputFolderLock&) = delete;
  OutputFolderLock& operator=(const OutputFolderLock&) = delete;

  // Who held the stale lock this one took over ("pid 4242 on host, since ...: headroom run ..."),
  // or "" when there was none.
  const std::string& taken_over() const { return taken_over_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::string taken_over_;
  RemoveOnSignal on_signal_;
};

// The command line a lock file names (main sets it from argv; "headroom" until then).
void set_lock_command_line(std::string command_line);

}  // namespace headroom
