#include "sim/core/output_name.hpp"

namespace headroom {

std::string output_name_problem(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name.front() == '/') return "it is an absolute path";
  if (name.find("..") != std::string_view::npos) return "it contains '..'";
  if (name.find_first_of("/\\") != std::string_view::npos) return "it contains a path separator";
  if (name == ".") return "it is '.', the folder out/ itself";
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7F) return "it contains a control character";
  return "";
}

}  // namespace headroom
