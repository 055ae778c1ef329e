#pragma once
// Reading a user's whole text file (YAML, JSON, CSV) with the checks every format shares: it must
// be a regular file (sim/core/input_file.hpp), and its bytes UTF-8 text. A UTF-8 byte-order mark is
// dropped; UTF-16/32 text, invalid UTF-8 and NUL bytes are errors naming the line and column, so
// that no parser sees them (and no output ever carries them). CRLF line endings are left to the
// parsers, which accept them.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/limits.hpp"

namespace headroom {

// The file's bytes; throws InputError "<path>: ..." (`what` names the kind of file, e.g. "scenario"),
// also when it holds more than `max_bytes` (checked before reading a regular file, while reading
// anything else: /dev/zero ends at the limit).
std::string read_text_file(const std::filesystem::path& path, std::string_view what,
                           std::uint64_t max_bytes = limits::kMaxTextFileBytes);

// "<name>: the <what> is <size>, above the limit of <max> for one (docs/limits.md)".
[[noreturn]] void throw_too_large(const std::string& name, std::string_view what, std::uint64_t size,
                                  std::uint64_t max_bytes, bool at_least = false);

// Throws InputError "<name>:<line>:<column>: ..." at the first byte that is not UTF-8 text.
void check_utf8_text(std::string_view text, const std::string& name);

// Offset of the first invalid UTF-8 sequence (or NUL byte) in `text`, if any.
std::optional<std::size_t> first_bad_utf8(std::string_view text);

// `text` for an error message: bytes that are not printable UTF-8 written as \xNN.
std::string printable(std::string_view text);

}  // namespace headroom
