#include "sim/core/output_lock.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <mutex>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/text_file.hpp"

namespace headroom {

namespace {

std::mutex g_command_mutex;
std::string g_command = "headroom";

std::string command_line() {
  std::lock_guard<std::mutex> lock(g_command_mutex);
  return g_command;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "an unknown host";
  return buf;
}

// What a lock file says (at most 4 KiB of it: it is another process's, or anyone's, text).
std::string read_holder(int fd) {
  std::string text(4096, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text;
}

// "pid 4242 on host-a, since 2024-05-01T10:00:00Z: headroom run a.yaml" from the lock's lines.
std::string describe_holder(const std::string& text) {
  std::string pid, host, started, command;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::string key = line.substr(0, space), value = printable(line.substr(space + 1));
    if (key == "pid") pid = value;
    else if (key == "host") host = value;
    else if (key == "started") started = value;
    else if (key == "command") command = value;
  }
  if (pid.empty()) return "a headroom that is starting, or a file that is not headroom's lock";
  std::string s = "pid " + pid;
  if (!host.empty()) s += " on " + host;
  if (!started.empty()) s += ", since " + started;
  if (!command.empty()) s += ": " + command;
  return s;
}

bool same_file(int fd, const std::filesystem::path& path) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && ::lstat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

void set_lock_command_line(std::string command_line) {
  std::lock_guard<std::mutex> lock(g_command_mutex);
  g_command = std::move(command_line);
}

OutputFolderLock::OutputFolderLock(const std::filesystem::path& dir) : path_(dir / kOutputLockName) {
  const std::string where = path_.string();
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    const bool created = fd >= 0;
    bool writable = created;
    if (!created) {
      if (errno != EEXIST)
        throw InputError(fmt::format("{}: cannot create the output folder's lock: {}", where, std::strerror(errno)));
      fd = ::open(path_.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
      writable = fd >= 0;
      if (fd < 0 && errno == EACCES) fd = ::open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);  // another user's
      if (fd < 0) {
        if (errno == ENOENT) continue;  // removed meanwhile by its holder
        if (errno == ELOOP)
          throw InputError(fmt::format("{}: is a symbolic link, not headroom's lock file; remove it", where));
        throw InputError(fmt::format("{}: cannot open the output folder's lock: {}", where, std::strerror(errno)));
      }
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string holder = read_holder(fd);
      ::close(fd);
      if (err == EWOULDBLOCK)
        throw InputError(fmt::format("{}: the output folder is in use by another headroom ({}); wait for it to "
                                     "finish or give another output folder",
                                     dir.string(), describe_holder(holder)));
      throw InputError(fmt::format("{}: cannot lock the output folder: {}", where, std::strerror(err)));
    }
    // Locked, but the file may have been removed (its holder finished) or replaced between open()
    // and flock(): then this lock guards nothing, and the path's current file is tried again.
    if (!same_file(fd, path_)) {
      ::close(fd);
      continue;
    }
    if (!created) {
      // A lock file nobody holds: its writer ended without removing it (SIGKILL, a crash).
      const std::string previous = read_holder(fd);
      // Empty: its creator has not written it yet and lost the race for the flock to this run.
      if (!previous.empty()) taken_over_ = describe_holder(previous);
      if (!writable) {
        // Another user's file: replace it (the folder is ours to write, or nothing else would be).
        const int err = ::unlink(path_.c_str()) == 0 ? 0 : errno;
        ::close(fd);
        if (err != 0)
          throw InputError(fmt::format("{}: cannot take over the stale lock left by {}: {}", where,
                                       describe_holder(previous),
                                       std::strerror(err)));
        continue;
      }
    }
    const std::string info = fmt::format("pid {}\nhost {}\nstarted {}\ncommand {}\n", ::getpid(), host_name(),
                                         now_utc(), command_line());
    // Best effort: the flock is the lock; the text only names its holder.
    [[maybe_unused]] const bool named = ::ftruncate(fd, 0) == 0 && ::pwrite(fd, info.data(), info.size(), 0) > 0;
    fd_ = fd;
    on_signal_.watch(path_);
    return;
  }
  throw InputError(fmt::format("{}: cannot take the output folder's lock (it kept being replaced)", where));
}

OutputFolderLock::~OutputFolderLock() {
  on_signal_.release();
  if (fd_ < 0) return;
  if (same_file(fd_, path_)) ::unlink(path_.c_str());  // never a newer holder's file
  ::close(fd_);
}

}  // namespace headroom
