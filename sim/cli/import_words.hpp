#pragma once
// The words of a server's command line as `headroom import` and `run --cmd` take it: several
// arguments (after `--`), or one argument holding the whole line as a shell would read it.
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/shell_words.hpp"

namespace headroom::cli {

inline std::vector<std::string> command_line_words(std::vector<std::string> args, std::string_view what) {
  if (!args.empty() && args.front() == "--") args.erase(args.begin());
  if (args.size() == 1) return shell_words(args.front(), what);
  return args;
}

}  // namespace headroom::cli
