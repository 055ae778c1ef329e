#pragma once
// A command's output folder for the run: created, and locked (sim/core/output_lock.hpp) until the
// command ends, so that a second command into the same folder is refused instead of mixing its files
// with this one's. A stale lock taken over (its holder was killed) is noted on stderr.
#include <filesystem>
#include <memory>

#include "sim/core/output_lock.hpp"

namespace headroom::cli {

std::unique_ptr<OutputFolderLock> open_output_folder(const std::filesystem::path& dir);
// The lock alone, of a folder that exists (`headroom report DIR`).
std::unique_ptr<OutputFolderLock> lock_output_folder(const std::filesystem::path& dir);

}  // namespace headroom::cli
