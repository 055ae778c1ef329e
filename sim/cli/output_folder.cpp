#include "sim/cli/output_folder.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "sim/core/atomic_file.hpp"

namespace headroom::cli {

std::unique_ptr<OutputFolderLock> open_output_folder(const std::filesystem::path& dir) {
  create_output_folder(dir);
  return lock_output_folder(dir);
}

std::unique_ptr<OutputFolderLock> lock_output_folder(const std::filesystem::path& dir) {
  auto lock = std::make_unique<OutputFolderLock>(dir);
  if (!lock->taken_over().empty())
    fmt::print(stderr, "headroom: note: {}: took over the lock left by {}, which no longer holds it\n",
               lock->path().string(), lock->taken_over());
  return lock;
}

}  // namespace headroom::cli
