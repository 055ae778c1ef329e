#pragma once
// Running out of memory on an input that is within every limit (limits.hpp) but too large for this
// machine: std::bad_alloc becomes OutOfMemory "out of memory while <doing what>", an InputError the
// CLI reports with exit code 2, instead of an "internal error" that names nothing.
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "sim/core/error.hpp"

namespace headroom {

class OutOfMemory : public InputError {
 public:
  explicit OutOfMemory(std::string_view doing)
      : InputError("out of memory while " + std::string(doing) +
                   " (the input is larger than this machine's memory allows; docs/limits.md)") {}
};

// Runs `f()`; a std::bad_alloc inside becomes OutOfMemory(doing). The innermost call names the step.
template <class F>
decltype(auto) while_doing(std::string_view doing, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(doing);
  }
}

}  // namespace headroom
