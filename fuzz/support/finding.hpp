#pragma once
// A property a fuzz target checks beyond "no crash": when it fails, the input is a finding.
// abort() makes libFuzzer save the input as crash-<sha1> (and fails the regression runner).
#include <cstdio>
#include <cstdlib>
#include <string>

namespace headroom::fuzz {

inline void require(bool holds, const std::string& what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

}  // namespace headroom::fuzz
