#include "tests/support/test_data.hpp"

#include <fstream>
#include <iterator>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

namespace headroom::test {

namespace fs = std::filesystem;

fs::path source_dir() { return fs::path(HEADROOM_SOURCE_DIR); }

static fs::path data_root() {
  if (const char* env = std::getenv("HEADROOM_DATA"); env && *env) return env;
#ifdef HEADROOM_DEFAULT_DATA
  return HEADROOM_DEFAULT_DATA;
#else
  return "../shared/traces";
#endif
}

static fs::path gpu_root() {
  if (const char* env = std::getenv("HEADROOM_GPU_DATA"); env && *env) return env;
#ifdef HEADROOM_DEFAULT_GPU_DATA
  return HEADROOM_DEFAULT_GPU_DATA;
#else
  return "../shared/gpu";
#endif
}

static fs::path existing_or_skip(const fs::path& p, const char* variable) {
  if (fs::exists(p)) return p;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") {
    FAIL("data file " << p << " is missing; under CI=true $" << variable << " must hold it");
  }
  std::cerr << "SKIPPED: data file " << p << " is missing (set " << variable << " to the folder holding it)\n";
  std::exit(77);
}

fs::path data_file(const std::string& relative) { return existing_or_skip(data_root() / relative, "HEADROOM_DATA"); }

fs::path gpu_file(const std::string& relative) { return existing_or_skip(gpu_root() / relative, "HEADROOM_GPU_DATA"); }

fs::path temp_dir(const std::string& tag) {
  static std::atomic<int> counter{0};
  fs::path p = fs::temp_directory_path() /
               ("headroom-test-" + tag + "-" + std::to_string(::getpid()) + "-" +
                std::to_string(counter++));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string headroom_binary() {
#ifdef HEADROOM_BINARY
  return HEADROOM_BINARY;
#else
  return "headroom";
#endif
}

CommandResult run_headroom(const std::string& args) { return run_shell("'" + headroom_binary() + "' " + args); }

CommandResult run_shell(const std::string& command) {
  // Scenarios name "$HEADROOM_DATA/..."; the binary's default (../shared/traces from the working
  // directory) does not hold from ctest's folder, so pass the folder the tests use.
  std::string cmd = "HEADROOM_DATA='" + data_root().string() + "' " + command + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  int status = ::pclose(pipe);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {code, out};
}

std::string q(const std::filesystem::path& path) {
  std::string quoted(1, '\'');  // appended piecewise: GCC 12 warns falsely on "'" + s + "'" (bug 105329)
  quoted += path.string();
  quoted += '\'';
  return quoted;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

}  // namespace headroom::test
