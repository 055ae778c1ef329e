#include "sim/core/gzip.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <zlib.h>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace headroom {

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
}

namespace {

// One z_stream, ended on every path out.
class Inflater {
 public:
  explicit Inflater(const std::string& where) {
    // 15 + 16: a 32 KiB window and a gzip header and trailer (not zlib's or raw deflate).
    if (inflateInit2(&z_, 15 + 16) != Z_OK) throw InputError(where + ": zlib could not start decompressing");
  }
  ~Inflater() { inflateEnd(&z_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  z_stream* get() { return &z_; }

 private:
  z_stream z_{};
};

}  // namespace

std::string gunzip(std::string_view bytes, std::uint64_t max_bytes, const std::string& where,
                   const std::string& limit_what) {
  if (!is_gzip(bytes)) throw InputError(where + ": not a gzip file (it does not start with 1f 8b)");
  Inflater inflater(where);
  z_stream* z = inflater.get();
  std::string out;
  std::size_t consumed = 0;  // input bytes of the members read so far
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  while (true) {
    const std::string_view rest = bytes.substr(consumed);
    // zlib counts in uInt (32 bits); the files read here are capped well below 4 GiB.
    z->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(rest.data()));
    z->avail_in = static_cast<uInt>(std::min<std::size_t>(rest.size(), std::numeric_limits<uInt>::max()));
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      // Room for one byte beyond the limit: output that reaches it is refused, output that ends
      // exactly at it is not.
      const std::size_t room = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, max_bytes + 1 - out.size()));
      const std::size_t before = out.size();
      out.resize(before + room);
      z->next_out = reinterpret_cast<Bytef*>(out.data() + before);
      z->avail_out = static_cast<uInt>(room);
      rc = inflate(z, Z_NO_FLUSH);
      out.resize(before + room - z->avail_out);
      if (out.size() > max_bytes)
        throw InputError(fmt::format("{}: the gzip data decompresses to more than {} ({} bytes), {} (docs/limits.md)",
                                     where, format_bytes(max_bytes), max_bytes, limit_what));
      if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
        throw InputError(fmt::format("{}: corrupt gzip data near compressed byte {}: {}", where,
                                     consumed + z->total_in, z->msg ? z->msg : "invalid deflate data"));
      if (rc == Z_MEM_ERROR) throw InputError(where + ": zlib ran out of memory decompressing the gzip data");
      if (rc == Z_BUF_ERROR || (rc == Z_OK && z->avail_in == 0 && z->avail_out > 0))
        throw InputError(fmt::format("{}: the gzip data is truncated: it ends after {} compressed bytes, inside a "
                                     "member, before its CRC-32 and length trailer",
                                     where, bytes.size()));
    }
    consumed += z->total_in;
    // gzip and Python's gzip skip zero bytes after the last member (padding of tape and block devices).
    if (bytes.find_first_not_of('\0', consumed) == std::string_view::npos) return out;
    if (!is_gzip(bytes.substr(consumed)))
      throw InputError(fmt::format("{}: {} bytes after the end of the gzip data at byte {} are not another gzip member",
                                   where, bytes.size() - consumed, consumed));
    if (inflateReset(z) != Z_OK) throw InputError(where + ": zlib could not start the next gzip member");
  }
}

}  // namespace headroom
