#pragma once
// Locating the real public traces and snapshots ($HEADROOM_DATA, default ../shared/traces).
// They are never copied into the project. When absent, a test is skipped (exit 77, which ctest
// reports as Skipped) for a user without them, and fails under CI=true, where they are always present.
#include <filesystem>
#include <string>

namespace headroom::test {

// The project's source folder (HEADROOM_SOURCE_DIR, set by tests/CMakeLists.txt).
std::filesystem::path source_dir();

// Path of a file under the data folder; skips or fails the current test when it is missing.
std::filesystem::path data_file(const std::string& relative);

// Path of a file of the real-GPU recordings ($HEADROOM_GPU_DATA, default ../shared/gpu); skips or
// fails like data_file when it is missing.
std::filesystem::path gpu_file(const std::string& relative);

// A fresh empty directory under the system temp folder, unique per call.
std::filesystem::path temp_dir(const std::string& tag);

// Runs the headroom binary with the given arguments; captures stdout+stderr and the exit code.
struct CommandResult {
  int exit_code;
  std::string output;
};
CommandResult run_headroom(const std::string& args);

// Command-line tests' file helpers: a path quoted for the shell, a whole file's bytes, a file
// written with `bytes` (binary, no newline translation).
std::string q(const std::filesystem::path& path);
std::string slurp(const std::filesystem::path& path);
void write(const std::filesystem::path& path, const std::string& bytes);

// The headroom binary under test, and any shell command run with the tests' $HEADROOM_DATA (for
// launchers: `mpirun -n 2 <headroom_binary()> sweep ...`).
std::string headroom_binary();
CommandResult run_shell(const std::string& command);

}  // namespace headroom::test
