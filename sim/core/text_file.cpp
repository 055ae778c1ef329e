#include "sim/core/text_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/out_of_memory.hpp"
#include "sim/core/units.hpp"
#include "sim/core/input_file.hpp"

namespace headroom {

namespace {

// Length of the UTF-8 sequence starting at text[i], or 0 when it is not one (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return c == 0 ? 0 : 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (i + n > text.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

std::optional<std::size_t> first_bad_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

void check_utf8_text(std::string_view text, const std::string& name) {
  if (text.starts_with("\xFF\xFE") || text.starts_with("\xFE\xFF"))
    throw InputError(fmt::format("{}:1:1: UTF-16 or UTF-32 text (a byte-order mark {}); expected UTF-8: save the file as "
                                 "UTF-8",
                                 name, text.starts_with("\xFF\xFE") ? "FF FE" : "FE FF"));
  const std::optional<std::size_t> bad = first_bad_utf8(text);
  if (!bad) return;
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < *bad; ++i)
    if (text[i] == '\n') ++line, line_start = i + 1;
  const std::size_t column = *bad - line_start + 1;
  if (text[*bad] == '\0')
    throw InputError(fmt::format("{}:{}:{}: a NUL byte; expected UTF-8 text (is this a binary file?)", name, line, column));
  throw InputError(fmt::format("{}:{}:{}: byte \\x{:02X} is not UTF-8 text; expected UTF-8 (was the file saved in "
                               "another encoding, such as Latin-1?)",
                               name, line, column, static_cast<unsigned char>(text[*bad])));
}

void throw_too_large(const std::string& name, std::string_view what, std::uint64_t size, std::uint64_t max_bytes,
                     bool at_least) {
  throw InputError(fmt::format("{}: the {} is {}{} ({} bytes), above the limit of {} for one (docs/limits.md)", name,
                               what, at_least ? "more than " : "", format_bytes(size), size, format_bytes(max_bytes)));
}

std::string read_text_file(const std::filesystem::path& path, std::string_view what, std::uint64_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw InputError(fmt::format("{}: no such file (the {} to read)", path.string(), what));
  if (fs::is_directory(st))
    throw InputError(fmt::format("{}: is a folder; expected the {} file", path.string(), what));
  refuse_special_file(path, what);
  if (fs::is_regular_file(st)) {
    const std::uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > max_bytes) throw_too_large(path.string(), what, size, max_bytes);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the {} ({})", path.string(), what, std::strerror(errno)));
  // Read in chunks up to the limit: the file may have grown since it was measured.
  std::string text;
  char chunk[1 << 16];
  while_doing(fmt::format("reading the {} {}", what, path.string()), [&] {
    while (in) {
      in.read(chunk, sizeof chunk);
      const auto got = static_cast<std::size_t>(in.gcount());
      if (text.size() + got > max_bytes) throw_too_large(path.string(), what, max_bytes, max_bytes, true);
      text.append(chunk, got);
    }
  });
  if (in.bad()) throw InputError(fmt::format("{}: cannot read the {} ({})", path.string(), what, std::strerror(errno)));
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);  // a UTF-8 byte-order mark: allowed, meaningless
  check_utf8_text(text, path.string());
  return text;
}

std::string printable(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    const auto c = static_cast<unsigned char>(text[i]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      out += fmt::format("\\x{:02X}", c);
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace headroom
