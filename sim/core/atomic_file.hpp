#pragma once
// Output files are written to a temporary name beside the target and renamed when complete,
// so a failed run never leaves a partial file behind.
#include <filesystem>
#include <functional>
#include <ostream>

namespace headroom {

// Calls `write` with a stream onto "<path>.tmp-<pid>", then renames it to `path`.
// Throws InputError (naming the path) when the folder is not writable; removes the temporary on failure.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                           bool binary = false);

}  // namespace headroom
