#pragma once
// Errors with context. InputError is for anything a user handed us (files, strings, flags):
// its message names the place (file, line, field) and what was expected. The CLI prints it
// and exits non-zero; it is never a crash.
#include <stdexcept>
#include <string>

namespace headroom {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Prefixes an error message with a location such as "trace.csv:12: column 3".
inline std::string at(const std::string& where, const std::string& what) { return where + ": " + what; }

}  // namespace headroom
