#pragma once
// Decompressing a gzip file held in memory (RFC 1952, through zlib), with a cap on what it may
// expand to: a few kilobytes of gzip can hold gigabytes of zeros (a decompression bomb), so the
// output is refused as soon as it passes the caller's limit, before more memory is taken.
#include <cstdint>
#include <string>
#include <string_view>

namespace headroom {

// True when the bytes start with gzip's magic number (1f 8b).
bool is_gzip(std::string_view bytes);

// The decompressed bytes of every gzip member in `bytes` (concatenated members, as `cat a.gz b.gz`
// makes, are read one after another, as gzip and Python's gzip read them). Throws InputError naming
// `where` for a truncated stream, corrupt data (zlib's reason: a bad CRC-32 is "incorrect data
// check"), bytes after the last member, or output above `max_bytes` (`limit_what` names the limit,
// e.g. "the limit for one snapshot").
std::string gunzip(std::string_view bytes, std::uint64_t max_bytes, const std::string& where,
                   const std::string& limit_what);

}  // namespace headroom
