#include "sim/core/input_file.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom {

void refuse_special_file(const std::filesystem::path& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // missing or unreadable: the caller's open says so
  const char* kind = S_ISFIFO(st.st_mode)  ? "a FIFO (named pipe)"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                                            : nullptr;
  if (!kind) return;  // a regular file or a folder
  throw InputError(fmt::format("{}: is {}, not a regular file; expected the {} as a regular file (headroom reads "
                               "no pipes, devices or sockets)",
                               path.string(), kind, what));
}

}  // namespace headroom
