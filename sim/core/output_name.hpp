#pragma once
// A scenario's or a grid's `name` names its default output folder, out/<name> (when no -o is given):
// it must be one plain path component, so that the folder stays inside out/ (issue 14). A folder
// given with -o is the user's own choice and is not checked.
#include <string>
#include <string_view>

namespace headroom {

// "" when `name` can name a folder under out/; otherwise what is wrong with it, e.g. "is an absolute
// path" (for "<key>: expected ..., got '<name>': <problem>").
std::string output_name_problem(std::string_view name);

}  // namespace headroom
