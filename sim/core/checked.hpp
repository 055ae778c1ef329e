#pragma once
// Checked integer arithmetic for sizes and counts derived from user input: the result, or nullopt
// when it does not fit the type (the caller names the input in its error). Limits (limits.hpp and
// each layer's *_limits.hpp) keep real inputs far from overflow; these catch what slips past.
#include <limits>
#include <optional>

namespace headroom {

template <class T>
std::optional<T> checked_add(T a, T b) {
  T r{};
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

template <class T>
std::optional<T> checked_mul(T a, T b) {
  T r{};
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a × b (both non-negative), or the type's maximum when it does not fit: for sizes only compared
// against a capacity,
// as Python's unbounded ints compare in the engines this simulates.
template <class T>
T saturating_mul(T a, T b) {
  T r{};
  if (__builtin_mul_overflow(a, b, &r)) return std::numeric_limits<T>::max();
  return r;
}

}  // namespace headroom
