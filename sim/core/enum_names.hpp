#pragma once
// An enum's spellings as one table, from which its name, its reader and the reader's error list are
// derived, so the three cannot drift apart. The first entry of a value is its name; later entries
// of the same value are aliases a reader accepts.
#include <array>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom {

enum class Spelling {
  listed,    // accepted and shown in "expected one of"
  alias,     // accepted, not shown (bfloat16 for bf16)
  name_only  // written, never read (dtypes that appear in programs but not in user input)
};

template <class E>
struct EnumName {
  E value;
  std::string_view text;
  Spelling spelling = Spelling::listed;
};

// How a reader compares: vLLM's backend and CUDA-graph names are upper case in its code, lower
// case in many users' command lines.
enum class NameCase { exact, any };

namespace enum_names_detail {

inline bool same(std::string_view a, std::string_view b, NameCase name_case) {
  if (a.size() != b.size()) return false;
  if (name_case == NameCase::exact) return a == b;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace enum_names_detail

template <class E, std::size_t N>
constexpr std::string_view enum_name(const std::array<EnumName<E>, N>& table, E value) {
  for (const EnumName<E>& e : table)
    if (e.value == value) return e.text;
  return "?";
}

// "a, b, c": the listed spellings, in table order.
template <class E, std::size_t N>
std::string enum_name_list(const std::array<EnumName<E>, N>& table) {
  std::string list;
  for (const EnumName<E>& e : table) {
    if (e.spelling != Spelling::listed) continue;
    if (!list.empty()) list += ", ";
    list += e.text;
  }
  return list;
}

// Reads `text` as one of the table's accepted spellings; else an InputError naming `what`, the listed
// spellings and what was given.
template <class E, std::size_t N>
E parse_enum(const std::array<EnumName<E>, N>& table, std::string_view text, std::string_view what,
             NameCase name_case = NameCase::exact) {
  for (const EnumName<E>& e : table)
    if (e.spelling != Spelling::name_only && enum_names_detail::same(text, e.text, name_case)) return e.value;
  throw InputError(fmt::format("{}: expected one of {}, got '{}'", what, enum_name_list(table), text));
}

}  // namespace headroom
