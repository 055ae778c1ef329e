#pragma once
// Every input must be a regular file (issue 14): a FIFO would block its reader forever, a device or a
// socket never ends or fails oddly. Every reader of a user's file (scenario, grid, policy list, GPU
// profile, config.json, trace, lengths file, snapshot, measurements, step description, the saved
// outputs `headroom report` redraws, sweep points) calls this before opening it, so that all refuse
// the same way. A missing file or a folder is left to the caller, whose message says what it
// expected there.
#include <filesystem>
#include <string_view>

namespace headroom {

// Throws InputError "<path>: is a FIFO (named pipe), not a regular file; expected the <what> ..."
// when `path` (links followed) exists and is neither a regular file nor a folder.
void refuse_special_file(const std::filesystem::path& path, std::string_view what);

}  // namespace headroom
