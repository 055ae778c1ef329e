#pragma once
// A command line as a user pastes it into a shell, split into words the way a POSIX shell splits
// them (no expansion): blanks separate words, '...' keeps everything literally, "..." keeps all but
// \" \\ \$ \` (backslash-escaped), a backslash outside quotes escapes the next character, and a
// backslash before a line break joins the lines (a command pasted over several lines).
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// InputError "<what>: unterminated ' quote starting at character N" (or ", or a trailing backslash).
std::vector<std::string> shell_words(std::string_view text, std::string_view what);

// The words joined back into one line, each quoted only where a shell needs it ('...').
std::string shell_join(const std::vector<std::string>& words);

}  // namespace headroom
