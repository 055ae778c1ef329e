#pragma once
// Files to remove if SIGINT, SIGTERM or SIGHUP (or SIGPIPE, SIGXFSZ) ends the process (issue 14):
// the temporaries of sim/core/atomic_file.hpp and an output folder's lock. The handler unlinks every
// registered path (unlink is async-signal-safe; the paths sit in a fixed table, so it allocates
// nothing), then re-raises the signal with its default action, so the exit status is the signal's
// as usual.
// A signal the process was started with ignored (nohup) stays ignored.
#include <filesystem>

#include <signal.h>

namespace headroom {

// Registers a path (made absolute) for removal on a signal, for as long as the object lives or
// until release(); unregistering never removes the file. The first registration installs the
// handlers. Register a file before creating it, so that no signal comes between the two.
class RemoveOnSignal {
 public:
  RemoveOnSignal() = default;
  explicit RemoveOnSignal(const std::filesystem::path& path) { watch(path); }
  ~RemoveOnSignal() { release(); }
  RemoveOnSignal(const RemoveOnSignal&) = delete;
  RemoveOnSignal& operator=(const RemoveOnSignal&) = delete;
  // Registers `path` instead of any earlier one.
  void watch(const std::filesystem::path& path);
  // Unregisters now (e.g. once the file was renamed away or removed).
  void release();

 private:
  int slot_ = -1;  // -1: not registered (released, or the table was full)
};

// Holds those signals back in the calling thread while it lives, for a few steps that must not be cut
// apart (renaming a command's outputs into place one after the other); one that comes meanwhile is
// delivered when it ends.
class DeferSignals {
 public:
  DeferSignals();
  ~DeferSignals();
  DeferSignals(const DeferSignals&) = delete;
  DeferSignals& operator=(const DeferSignals&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace headroom
