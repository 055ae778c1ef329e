#include "sim/core/content_hash.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <unistd.h>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"

namespace headroom {

std::uint64_t fnv1a64(std::string_view text, std::uint64_t h) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;  // FNV-1a 64-bit prime
  }
  return h;
}

std::uint64_t fnv1a64_file(const std::filesystem::path& path, std::string_view what) {
  refuse_special_file(path, what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("{}: cannot open the {} ({})", path.string(), what, std::strerror(errno)));
  constexpr std::size_t kBlock = 1 << 16;
  const std::unique_ptr<char[]> buf(new char[kBlock]);
  std::uint64_t h = kFnv1a64Basis;
  for (;;) {
    const ssize_t n = ::read(fd, buf.get(), kBlock);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw InputError(fmt::format("{}: cannot read the {} ({})", path.string(), what, std::strerror(err)));
    }
    h = fnv1a64(std::string_view(buf.get(), static_cast<std::size_t>(n)), h);
  }
  ::close(fd);
  return h;
}

}  // namespace headroom
