#pragma once
// The YAML text of sim/device/profiles/*.yaml, compiled in by sim/device/profiles.cmake so that
// built-in profiles need no files at run time.
#include <span>
#include <string_view>

namespace headroom::device {

struct BuiltinProfileText {
  std::string_view name;  // file name without .yaml
  std::string_view yaml;
};

// Sorted by name.
std::span<const BuiltinProfileText> builtin_profile_texts();

}  // namespace headroom::device
