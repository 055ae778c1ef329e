// Faults around the files headroom writes (issue 14), through the binary: a signal mid-run leaves no
// temporary and ends with the signal's status; a second run into a folder in use is refused naming
// the holder and never mixes its files with the first's; a lock left by a killed run is taken over;
// links planted in a shared output folder are never written through; a write failure says why and
// leaves no output half-written; a sweep runs again the points whose files changed since.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/test_data.hpp"

using headroom::test::q;
using headroom::test::run_headroom;
using headroom::test::slurp;
using headroom::test::temp_dir;
using headroom::test::write;
namespace fs = std::filesystem;

namespace {

// A workload that outlasts any test: the run is still simulating when the test signals it.
const char* kLongScenario = R"(name: long
gpu: {profile: h100-sxm-80gb}
model: {name: Llama-3.1-8B}
engine: {kind: vllm}
workload:
  allow_large: true
  synthetic:
    requests: 100000000
    arrivals: {process: poisson, rate: 50}
    input: {dist: fixed, value: 100}
    output: {dist: fixed, value: 10}
)";

std::string short_scenario(const std::string& name) {
  return "name: " + name + R"(
gpu: {profile: h100-sxm-80gb}
model: {name: Llama-3.1-8B}
engine: {kind: vllm}
workload:
  synthetic:
    requests: 20
    arrivals: {process: poisson, rate: 10}
    input: {dist: fixed, value: 100}
    output: {dist: fixed, value: 10}
)";
}

// headroom started in the background (no shell between, so that the pid is headroom's), its output
// in `log`; `in_child` runs in the child just before exec (limits, dispositions).
pid_t spawn_headroom(const std::vector<std::string>& args, const fs::path& log,
                     const std::function<void()>& in_child = {}) {
  std::vector<std::string> argv = {headroom::test::headroom_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv;
  for (std::string& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The test framework's handlers and a caller's ignored signals must not leak into headroom.
    for (int s : {SIGINT, SIGTERM, SIGHUP}) std::signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    if (in_child) in_child();
    ::execv(c_argv[0], c_argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

// Polls `ready` for up to a minute.
bool eventually(const std::function<bool()>& ready) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Every entry of `dir` (hidden ones included), by name.
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool has_temporary(const fs::path& dir, const std::string& name) {
  for (const std::string& e : entries(dir))
    if (e.rfind(name + ".tmp-", 0) == 0) return true;
  return false;
}

// A run of the long scenario into `out`, once it holds the folder and streams requests.csv.
pid_t start_long_run(const fs::path& scenario, const fs::path& out, const fs::path& log) {
  const pid_t pid = spawn_headroom({"run", scenario.string(), "--no-progress", "-o", out.string()}, log);
  REQUIRE(eventually([&] { return fs::exists(out) && has_temporary(out, "requests.csv"); }));
  REQUIRE(eventually([&] { return slurp(out / ".headroom.lock").find("command ") != std::string::npos; }));
  return pid;
}

const std::vector<std::string> kRunOutputs = {"report.html", "requests.csv", "scenario.resolved.yaml", "summary.json",
                                              "timeline.csv"};

}  // namespace

TEST_CASE("faults: SIGINT, SIGTERM or SIGHUP during generate-trace leaves no temporary and ends with the signal") {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    INFO("signal " << sig);
    const fs::path dir = temp_dir("fault-signal");
    const pid_t pid = spawn_headroom({"generate-trace", "--requests", "2000000000", "--allow-large", "--rate", "100", "-o",
                                      (dir / "trace.csv").string()},
                                     dir.parent_path() / (dir.filename().string() + ".log"));
    REQUIRE(eventually([&] { return has_temporary(dir, "trace.csv"); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // well into writing rows
    ::kill(pid, sig);
    const int status = wait_for_exit(pid);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);  // the usual status of a process the signal ended
    CHECK(entries(dir).empty());
    fs::remove_all(dir);
    fs::remove(dir.parent_path() / (dir.filename().string() + ".log"));
  }
}

TEST_CASE("faults: SIGTERM during a run leaves neither a temporary nor the folder's lock") {
  const fs::path dir = temp_dir("fault-run");
  write(dir / "long.yaml", kLongScenario);
  const pid_t pid = start_long_run(dir / "long.yaml", dir / "out", dir / "run.log");
  ::kill(pid, SIGTERM);
  const int status = wait_for_exit(pid);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(entries(dir / "out").empty());
  fs::remove_all(dir);
}

TEST_CASE("faults: a second run into a folder in use is refused naming the holder, and the folder is never mixed") {
  const fs::path dir = temp_dir("fault-lock");
  write(dir / "long.yaml", kLongScenario);
  write(dir / "short.yaml", short_scenario("short"));
  const fs::path out = dir / "out";
  const pid_t holder = start_long_run(dir / "long.yaml", out, dir / "run.log");
  const std::string held_by = "the output folder is in use by another headroom (pid " + std::to_string(holder);
  for (const std::string& command : {"run " + q(dir / "short.yaml") + " --no-progress -o " + q(out),
                                     "compare " + q(dir / "short.yaml") + " -j 1 -o " + q(out),
                                     "report " + q(out)}) {
    const auto r = run_headroom(command);
    INFO(command << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(held_by));
    CHECK_THAT(r.output, Catch::Contains("headroom run " + (dir / "long.yaml").string()));
  }
  ::kill(holder, SIGTERM);
  wait_for_exit(holder);
  CHECK(entries(out).empty());  // neither run left anything: the first never finished, the second never began
  const auto r = run_headroom("run " + q(dir / "short.yaml") + " --no-progress -o " + q(out));
  CHECK(r.exit_code == 0);
  CHECK(entries(out) == kRunOutputs);  // the lock went with its run
  fs::remove_all(dir);
}

TEST_CASE("faults: two runs started together into one folder never leave it mixed") {
  const fs::path dir = temp_dir("fault-race");
  write(dir / "first.yaml", short_scenario("first"));
  write(dir / "second.yaml", short_scenario("second"));
  for (int round = 0; round < 6; ++round) {
    INFO("round " << round);
    const fs::path out = dir / ("out" + std::to_string(round));
    const pid_t a = spawn_headroom({"run", (dir / "first.yaml").string(), "--no-progress", "-o", out.string()},
                                   dir / "first.log");
    const pid_t b = spawn_headroom({"run", (dir / "second.yaml").string(), "--no-progress", "-o", out.string()},
                                   dir / "second.log");
    const int sa = wait_for_exit(a), sb = wait_for_exit(b);
    REQUIRE(WIFEXITED(sa));
    REQUIRE(WIFEXITED(sb));
    const int ea = WEXITSTATUS(sa), eb = WEXITSTATUS(sb);
    CHECK((ea == 0 || ea == 2));
    CHECK((eb == 0 || eb == 2));
    CHECK((ea == 0 || eb == 0));
    if (ea == 2) CHECK_THAT(slurp(dir / "first.log"), Catch::Contains("the output folder is in use by another headroom"));
    if (eb == 2) CHECK_THAT(slurp(dir / "second.log"), Catch::Contains("the output folder is in use by another headroom"));
    // Whatever the interleaving, every file is the same run's.
    CHECK(entries(out) == kRunOutputs);
    const std::string name = nlohmann::json::parse(slurp(out / "summary.json"))["scenario"].get<std::string>();
    CHECK(slurp(out / "scenario.resolved.yaml").find("\nname: " + name + "\n") != std::string::npos);
    CHECK(slurp(out / "report.html").find("\"title\":\"headroom run: " + name + "\"") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("faults: the lock of a killed run is taken over, not honoured forever") {
  const fs::path dir = temp_dir("fault-stale");
  write(dir / "long.yaml", kLongScenario);
  write(dir / "short.yaml", short_scenario("short"));
  const fs::path out = dir / "out";
  const pid_t holder = start_long_run(dir / "long.yaml", out, dir / "run.log");
  ::kill(holder, SIGKILL);  // nothing can clean up after SIGKILL: the lock file stays behind
  wait_for_exit(holder);
  REQUIRE(fs::exists(out / ".headroom.lock"));
  const auto r = run_headroom("run " + q(dir / "short.yaml") + " --no-progress -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("took over the lock left by pid " + std::to_string(holder)));
  CHECK_FALSE(fs::exists(out / ".headroom.lock"));
  for (const std::string& f : kRunOutputs) CHECK(fs::is_regular_file(out / f));
  fs::remove_all(dir);
}

TEST_CASE("faults: links planted in a shared output folder are never written through") {
  // Another user of the folder plants links at the temporary names the old scheme used
  // (<name>.tmp-<pid> for the pids to come) and at an output's own name.
  const fs::path dir = temp_dir("fault-links"), victims = temp_dir("fault-victims");
  write(dir / "short.yaml", short_scenario("short"));
  write(victims / "victim", "precious\n");
  const fs::path out = dir / "out";
  fs::create_directories(out);
  int last_pid = 0;
  std::ifstream("/proc/sys/kernel/ns_last_pid") >> last_pid;
  for (int pid = last_pid + 1; pid <= last_pid + 200; ++pid)
    for (const std::string& f : kRunOutputs) fs::create_symlink(victims / "victim", out / (f + ".tmp-" + std::to_string(pid)));
  fs::create_symlink(victims / "victim", out / "summary.json");
  auto r = run_headroom("run " + q(dir / "short.yaml") + " --no-progress -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(slurp(victims / "victim") == "precious\n");
  CHECK(fs::is_regular_file(fs::symlink_status(out / "summary.json")));  // replaced, not followed
  CHECK(nlohmann::json::parse(slurp(out / "summary.json"))["scenario"] == "short");

  // A link at the lock's name is refused, its target untouched.
  const fs::path out2 = dir / "out2";
  fs::create_directories(out2);
  fs::create_symlink(victims / "victim", out2 / ".headroom.lock");
  r = run_headroom("run " + q(dir / "short.yaml") + " --no-progress -o " + q(out2));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains(".headroom.lock: is a symbolic link, not headroom's lock file; remove it"));
  CHECK(slurp(victims / "victim") == "precious\n");
  fs::remove_all(dir);
  fs::remove_all(victims);
}

TEST_CASE("faults: a write that fails says why, and leaves no output half-written") {
  // A file-size limit makes a write fail (EFBIG) as a full disk would (ENOSPC); /dev/full cannot
  // stand in, since every output is written to a temporary in its own folder.
  const fs::path dir = temp_dir("fault-full");
  write(dir / "short.yaml", short_scenario("short"));
  const auto limit = [](rlim_t bytes) {
    return [bytes] {
      std::signal(SIGXFSZ, SIG_IGN);  // ignored stays ignored across exec: the write fails instead
      const rlimit lim{bytes, bytes};
      ::setrlimit(RLIMIT_FSIZE, &lim);
    };
  };
  pid_t pid = spawn_headroom({"generate-trace", "--requests", "100000", "--rate", "10", "-o",
                              (dir / "trace.csv").string()},
                             dir / "trace.log", limit(64 * 1024));
  int status = wait_for_exit(pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(slurp(dir / "trace.log"), Catch::Contains("trace.csv: write failed: File too large"));
  CHECK_FALSE(has_temporary(dir, "trace.csv"));
  CHECK_FALSE(fs::exists(dir / "trace.csv"));

  // report.html (over a megabyte) is the one output over the limit: the run fails naming it, and
  // since every output is written in full before any is put in place, none is (not 4 of 5).
  const fs::path out = dir / "out";
  pid = spawn_headroom({"run", (dir / "short.yaml").string(), "--no-progress", "-o", out.string()}, dir / "run.log",
                       limit(512 * 1024));
  status = wait_for_exit(pid);
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(slurp(dir / "run.log"), Catch::Contains("report.html: write failed: File too large"));
  CHECK(entries(out).empty());
  fs::remove_all(dir);
}

TEST_CASE("faults: a sweep runs again the points whose trace changed since they ran") {
  const fs::path dir = temp_dir("fault-sweep");
  const auto trace = [&](int requests) {
    const auto r = run_headroom("generate-trace --requests " + std::to_string(requests) + " --rate 5 -o " +
                                q(dir / "trace.csv"));
    REQUIRE(r.exit_code == 0);
  };
  write(dir / "grid.yaml", R"(name: traced
base:
  name: traced
  gpu: {profile: h100-sxm-80gb}
  model: {name: Llama-3.1-8B}
  engine: {kind: vllm}
  workload:
    trace: {path: trace.csv}
axes:
  gpu_memory_utilization: [0.85, 0.9]
)");
  trace(20);
  auto r = run_headroom("sweep " + q(dir / "grid.yaml") + " -j 1 -o " + q(dir / "out"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string before = slurp(dir / "out" / "results.csv");
  CHECK(before.find(",20,20,") != std::string::npos);  // arrived, completed

  trace(30);  // the same path, other contents
  r = run_headroom("sweep " + q(dir / "grid.yaml") + " --collect -o " + q(dir / "out"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("2 of 2 points have not finished (the first is point 0), 2 of them because files "
                                       "they read have changed since they ran"));
  r = run_headroom("sweep " + q(dir / "grid.yaml") + " -j 1 -o " + q(dir / "out"));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("0 resumed, 2 run"));
  CHECK_THAT(r.output, Catch::Contains("2 earlier results were not resumed: files their points read"));
  // The table is the new trace's alone, as a sweep run afresh on it writes it.
  r = run_headroom("sweep " + q(dir / "grid.yaml") + " -j 1 -o " + q(dir / "fresh"));
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir / "out" / "results.csv") == slurp(dir / "fresh" / "results.csv"));
  CHECK(slurp(dir / "out" / "results.json") == slurp(dir / "fresh" / "results.json"));
  CHECK(slurp(dir / "out" / "results.csv") != before);
  // Unchanged files: everything resumes.
  r = run_headroom("sweep " + q(dir / "grid.yaml") + " -j 1 -o " + q(dir / "out"));
  CHECK_THAT(r.output, Catch::Contains("2 resumed, 0 run"));
  fs::remove_all(dir);
}
