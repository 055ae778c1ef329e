#include "sim/core/shell_words.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::vector<std::string> shell_words(std::string_view text, std::string_view what) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  std::size_t i = 0;
  auto fail = [&](std::string_view problem, std::size_t at) {
    throw InputError(fmt::format("{}: {} starting at character {}", what, problem, at + 1));
  };
  while (i < text.size()) {
    const char c = text[i];
    if (blank(c)) {
      if (in_word) words.push_back(std::move(word)), word.clear(), in_word = false;
      ++i;
    } else if (c == '\\') {
      if (i + 1 >= text.size()) fail("a backslash with nothing after it", i);
      if (text[i + 1] == '\n') {  // line continuation
        i += 2;
      } else if (text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n') {
        i += 3;
      } else {
        word += text[i + 1], in_word = true, i += 2;
      }
    } else if (c == '\'') {
      const std::size_t end = text.find('\'', i + 1);
      if (end == std::string_view::npos) fail("unterminated ' quote", i);
      word.append(text.substr(i + 1, end - i - 1)), in_word = true, i = end + 1;
    } else if (c == '"') {
      const std::size_t start = i++;
      in_word = true;
      for (;;) {
        if (i >= text.size()) fail("unterminated \" quote", start);
        const char d = text[i];
        if (d == '"') { ++i; break; }
        if (d == '\\' && i + 1 < text.size()) {
          const char e = text[i + 1];
          if (e == '"' || e == '\\' || e == '$' || e == '`') { word += e, i += 2; continue; }
          if (e == '\n') { i += 2; continue; }
        }
        word += d, ++i;
      }
    } else {
      word += c, in_word = true, ++i;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    const bool plain = !w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      out += w;
      continue;
    }
    out += '\'';
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

}  // namespace headroom
