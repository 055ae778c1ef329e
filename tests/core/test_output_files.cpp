// Output files, output folders and inputs under faults (issue 14): temporaries created exclusively
// under unpredictable names and never written through a planted link, write errors that say why,
// outputs staged so that a failure leaves every target as it was, the output folder's lock (refused
// while held, taken over once its holder is dead), non-regular inputs refused, names confined.
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "sim/core/atomic_file.hpp"
#include "sim/core/content_hash.hpp"
#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/output_lock.hpp"
#include "sim/core/output_name.hpp"
#include "sim/core/text_file.hpp"
#include "tests/support/test_data.hpp"

namespace fs = std::filesystem;
using namespace headroom;
using headroom::test::slurp;
using headroom::test::temp_dir;
using headroom::test::write;

namespace {

// Names in `dir` that look like a temporary ("<name>.tmp-...").
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) out.push_back(e.path().filename().string());
  return out;
}

struct ChildResult {
  int status = 0;
  std::string output;  // what the child wrote to its stdout
};

// Runs `body` in a forked child (for process-wide limits and deaths), its stdout captured; an
// exception's message is printed and the child exits 3.
ChildResult in_child(const std::function<void()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDOUT_FILENO);
    int code = 0;
    try {
      body();
    } catch (const std::exception& e) {
      std::printf("%s", e.what());
      code = 3;
    }
    std::fflush(stdout);
    ::_exit(code);
  }
  ::close(fds[1]);
  ChildResult r;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) r.output.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  REQUIRE(::waitpid(pid, &r.status, 0) == pid);
  return r;
}

// A file-size limit makes writes fail with EFBIG, as a full disk would with ENOSPC.
void limit_file_size(rlim_t bytes) {
  std::signal(SIGXFSZ, SIG_IGN);  // the write fails instead of the process being killed
  const rlimit lim{bytes, bytes};
  ::setrlimit(RLIMIT_FSIZE, &lim);
}

}  // namespace

TEST_CASE("atomic file: the target appears only at commit, and an abandoned file leaves no temporary") {
  const fs::path dir = temp_dir("atomic");
  write(dir / "out.txt", "old\n");
  {
    AtomicOutputFile f(dir / "out.txt");
    f.stream() << "new\n";
    CHECK(slurp(dir / "out.txt") == "old\n");
    CHECK(temporaries(dir).size() == 1);
  }  // destroyed without commit()
  CHECK(slurp(dir / "out.txt") == "old\n");
  CHECK(temporaries(dir).empty());
  CHECK_THROWS_AS(write_file_atomically(dir / "out.txt", [](std::ostream& o) { o << "half"; throw InputError("boom"); }),
                  InputError);
  CHECK(slurp(dir / "out.txt") == "old\n");
  CHECK(temporaries(dir).empty());
  write_file_atomically(dir / "out.txt", [](std::ostream& o) { o << "new\n"; });
  CHECK(slurp(dir / "out.txt") == "new\n");
  CHECK(temporaries(dir).empty());
  fs::remove_all(dir);
}

TEST_CASE("atomic file: two writers of one file get distinct temporaries, and the last commit wins") {
  const fs::path dir = temp_dir("atomic-two");
  AtomicOutputFile a(dir / "out.txt"), b(dir / "out.txt");
  a.stream() << "a\n";
  b.stream() << "b\n";
  CHECK(temporaries(dir).size() == 2);
  a.commit();
  b.commit();
  CHECK(slurp(dir / "out.txt") == "b\n");
  CHECK(temporaries(dir).empty());
  fs::remove_all(dir);
}

TEST_CASE("atomic file: a symbolic link planted in the folder is never written through") {
  // Another user of a shared folder plants links at the names the old scheme used (<name>.tmp-<pid>
  // for the next pids) and at the target itself; the file they point at must stay untouched.
  const fs::path dir = temp_dir("atomic-links"), victims = temp_dir("atomic-victims");
  write(victims / "victim", "precious\n");
  const pid_t pid = ::getpid();
  for (int k = 0; k < 64; ++k)
    fs::create_symlink(victims / "victim", dir / ("out.txt.tmp-" + std::to_string(pid + k)));
  fs::create_symlink(victims / "victim", dir / "out.txt");
  write_file_atomically(dir / "out.txt", [](std::ostream& o) { o << "mine\n"; });
  CHECK(slurp(victims / "victim") == "precious\n");
  CHECK(fs::is_regular_file(fs::symlink_status(dir / "out.txt")));  // the link was replaced, not followed
  CHECK(slurp(dir / "out.txt") == "mine\n");
  std::size_t links = 0;
  for (const auto& e : fs::directory_iterator(dir)) links += fs::is_symlink(e.symlink_status());
  CHECK(links == 64);  // the planted links are left as they were
  fs::remove_all(dir);
  fs::remove_all(victims);
}

TEST_CASE("atomic file: a failed write names the file and the system's reason, and leaves the old file") {
  const fs::path dir = temp_dir("atomic-full");
  write(dir / "big.bin", "old\n");
  const ChildResult r = in_child([&] {
    limit_file_size(1 << 20);
    write_file_atomically(dir / "big.bin", [](std::ostream& o) { o << std::string(4 << 20, 'x'); });
  });
  CHECK(WIFEXITED(r.status));
  CHECK(WEXITSTATUS(r.status) == 3);
  CHECK_THAT(r.output, Catch::Contains("big.bin: write failed: File too large"));
  CHECK(slurp(dir / "big.bin") == "old\n");
  CHECK(temporaries(dir).empty());
  fs::remove_all(dir);
}

TEST_CASE("staged outputs: a failure while writing any of them leaves every target as it was") {
  const fs::path dir = temp_dir("staged");
  write(dir / "a.txt", "old a\n");
  write(dir / "b.txt", "old b\n");
  const ChildResult r = in_child([&] {
    limit_file_size(1 << 20);
    StagedOutputs outputs;
    outputs.add(dir / "a.txt", "new a\n");
    outputs.add(dir / "b.txt", std::string(4 << 20, 'b'));
    outputs.commit();
  });
  CHECK(WEXITSTATUS(r.status) == 3);
  CHECK_THAT(r.output, Catch::Contains("b.txt: write failed: File too large"));
  CHECK(slurp(dir / "a.txt") == "old a\n");  // written in full, yet not renamed: b failed
  CHECK(slurp(dir / "b.txt") == "old b\n");
  CHECK(temporaries(dir).empty());
  StagedOutputs outputs;
  outputs.add(dir / "a.txt", "new a\n");
  outputs.add(dir / "b.txt", "new b\n");
  outputs.commit();
  CHECK(slurp(dir / "a.txt") == "new a\n");
  CHECK(slurp(dir / "b.txt") == "new b\n");
  fs::remove_all(dir);
}

TEST_CASE("output lock: a second holder is refused, naming the first, and the lock file goes with its holder") {
  const fs::path dir = temp_dir("lock");
  set_lock_command_line("headroom run test.yaml");
  {
    OutputFolderLock first(dir);
    CHECK(first.taken_over().empty());
    CHECK(fs::exists(dir / kOutputLockName));
    CHECK_THAT(slurp(dir / kOutputLockName), Catch::Contains("pid " + std::to_string(::getpid())));
    try {
      OutputFolderLock second(dir);
      FAIL("the second lock was granted");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains("the output folder is in use by another headroom (pid " +
                                           std::to_string(::getpid())));
      CHECK_THAT(e.what(), Catch::Contains(": headroom run test.yaml)"));
    }
  }
  CHECK_FALSE(fs::exists(dir / kOutputLockName));
  OutputFolderLock again(dir);  // free again
  fs::remove_all(dir);
}

TEST_CASE("output lock: a lock left by a killed process is taken over, not honoured forever") {
  const fs::path dir = temp_dir("lock-stale");
  pid_t holder = 0;
  const ChildResult r = in_child([&] {
    new OutputFolderLock(dir);  // never released: the process dies holding it
    std::printf("%d", static_cast<int>(::getpid()));
    std::fflush(stdout);
    ::raise(SIGKILL);
  });
  CHECK(WIFSIGNALED(r.status));
  holder = std::stoi(r.output);
  REQUIRE(fs::exists(dir / kOutputLockName));  // SIGKILL leaves the file; the kernel dropped the flock
  {
    OutputFolderLock lock(dir);
    CHECK_THAT(lock.taken_over(), Catch::StartsWith("pid " + std::to_string(holder)));
    CHECK_THAT(slurp(dir / kOutputLockName), Catch::Contains("pid " + std::to_string(::getpid())));
  }
  CHECK_FALSE(fs::exists(dir / kOutputLockName));
  fs::remove_all(dir);
}

TEST_CASE("output lock: a symbolic link at the lock's name is refused, its target untouched") {
  const fs::path dir = temp_dir("lock-link"), victims = temp_dir("lock-victims");
  write(victims / "victim", "precious\n");
  fs::create_symlink(victims / "victim", dir / kOutputLockName);
  CHECK_THROWS_WITH(OutputFolderLock{dir}, Catch::Contains("is a symbolic link, not headroom's lock file"));
  CHECK(slurp(victims / "victim") == "precious\n");
  fs::remove_all(dir);
  fs::remove_all(victims);
}

TEST_CASE("inputs: a FIFO, a device or a socket is refused the same way, without blocking") {
  const fs::path dir = temp_dir("fifo");
  REQUIRE(::mkfifo((dir / "scenario.yaml").c_str(), 0644) == 0);
  CHECK_THROWS_WITH(read_text_file(dir / "scenario.yaml", "scenario"),
                    Catch::Contains("scenario.yaml: is a FIFO (named pipe), not a regular file; expected the scenario "
                                    "as a regular file"));
  CHECK_THROWS_WITH(fnv1a64_file(dir / "scenario.yaml", "trace"), Catch::Contains("is a FIFO"));
  CHECK_THROWS_WITH(refuse_special_file("/dev/null", "trace"), Catch::Contains("/dev/null: is a character device"));
  CHECK_NOTHROW(refuse_special_file(dir, "trace"));                 // a folder: the caller's message
  CHECK_NOTHROW(refuse_special_file(dir / "missing", "trace"));     // missing: the caller's message
  write(dir / "ok.yaml", "a: 1\n");
  CHECK_NOTHROW(refuse_special_file(dir / "ok.yaml", "scenario"));
  fs::remove_all(dir);
}

TEST_CASE("content hash: a file's hash is FNV-1a of its bytes, read in blocks") {
  const fs::path dir = temp_dir("hash");
  std::string bytes;
  for (int i = 0; i < 200000; ++i) bytes += static_cast<char>(i * 7 + 3);
  write(dir / "f.bin", bytes);
  CHECK(fnv1a64_file(dir / "f.bin", "trace") == fnv1a64(bytes));
  CHECK(fnv1a64("") == kFnv1a64Basis);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);  // the published FNV-1a 64 test vector
  CHECK(fnv1a64("bc", fnv1a64("a")) == fnv1a64("abc"));
  fs::remove_all(dir);
}

TEST_CASE("output names: one plain path component, so that out/<name> stays inside out/") {
  CHECK(output_name_problem("llama-70b_h100.tp8") == "");
  CHECK(output_name_problem("") == "it is empty");
  CHECK(output_name_problem("/abs/dir") == "it is an absolute path");
  CHECK(output_name_problem("../../x") == "it contains '..'");
  CHECK(output_name_problem("..") == "it contains '..'");
  CHECK(output_name_problem("a/b") == "it contains a path separator");
  CHECK(output_name_problem("a\\b") == "it contains a path separator");
  CHECK(output_name_problem(".") == "it is '.', the folder out/ itself");
  CHECK(output_name_problem("a\nb") == "it contains a control character");
}
