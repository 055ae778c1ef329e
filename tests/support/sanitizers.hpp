// Whether this test executable was built with a sanitizer (the clang build of `make test`,
// cmake/sanitize.cmake). GCC defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__; clang answers
// __has_feature.
//
// The sanitizer build runs every test again, 20-50x slower (docs/development.md, "Build and test
// times"). A long random walk or property run may do less there, through the two helpers below,
// where every assertion of the test still holds and still means something: the Release run keeps
// the full size, which is what the test's name states, and the test says in a comment what its
// sanitizer run does.
#pragma once

namespace headroom::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// n in Release; n / divisor (at least 1) under the sanitizers: the length of a walk whose every
// path is taken well within its first n / divisor operations.
constexpr long sanitized_share(long n, long divisor) {
  if (!kSanitized) return n;
  return n / divisor > 0 ? n / divisor : 1;
}

// Whether step `step` of a walk runs its full checks (invariants walking the whole state, deep
// comparisons with a reference): every step in Release, every `every`-th under the sanitizers.
// The walk itself, and so every figure the test asserts at its end, is the same in both builds.
constexpr bool sanitized_every(long step, long every) { return !kSanitized || step % every == 0; }

}  // namespace headroom::test
