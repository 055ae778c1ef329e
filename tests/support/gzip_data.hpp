#pragma once
// gzip-compressing test data in memory (zlib), to build .gz inputs: whole, truncated, corrupted.
#include <string>

namespace headroom::test {

// `text` as one gzip member (level 9).
std::string gzip(const std::string& text);

}  // namespace headroom::test
