#include "sim/core/signal_cleanup.hpp"

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <mutex>
#include <system_error>
#include <unistd.h>

namespace headroom {

namespace {

// A slot is free, being filled (the handler skips it), or holds a path. More slots than files a run
// has open at once: one per sweep thread plus a command's few outputs and its lock.
constexpr int kSlots = 512;
enum : int { kFree = 0, kFilling = 1, kFull = 2 };
struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
Slot g_slots[kSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads the slots' states");

// Ctrl-C, kill, a closed terminal; and a closed output pipe or a file-size limit, which end a run
// just as abruptly.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};

extern "C" void remove_registered_files(int sig) {
  const int saved_errno = errno;
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == kFull) ::unlink(s.path);
  // The default action, delivered as soon as the handler returns and the signal is unblocked.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, sig);
  ::sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  errno = saved_errno;
}

void install_handlers() {
  struct sigaction sa {};
  sa.sa_handler = remove_registered_files;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals) sigaddset(&sa.sa_mask, s);  // one cleanup at a time
  for (int s : kSignals) {
    struct sigaction old {};
    if (::sigaction(s, nullptr, &old) != 0) continue;
    // Only where the default (death) would apply: an ignored signal stays ignored (nohup), and a
    // handler someone else installed (a test framework, an MPI runtime) stays theirs.
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) ::sigaction(s, &sa, nullptr);
  }
}

}  // namespace

void RemoveOnSignal::watch(const std::filesystem::path& path) {
  release();
  static std::once_flag installed;
  std::call_once(installed, install_handlers);
  std::error_code ec;
  const std::string p = std::filesystem::absolute(path, ec).string();
  if (ec || p.size() >= PATH_MAX) return;  // not removable on a signal; still removed on every other exit
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acquire)) continue;
    std::memcpy(g_slots[i].path, p.c_str(), p.size() + 1);
    g_slots[i].state.store(kFull, std::memory_order_release);
    slot_ = i;
    return;
  }
}

DeferSignals::DeferSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kSignals) sigaddset(&set, s);
  ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

DeferSignals::~DeferSignals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

void RemoveOnSignal::release() {
  if (slot_ < 0) return;
  g_slots[slot_].state.store(kFree, std::memory_order_release);
  slot_ = -1;
}

}  // namespace headroom
