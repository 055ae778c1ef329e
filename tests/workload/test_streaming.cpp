// A trace of a million rows is streamed: read through a fixed buffer, never loaded whole.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <sys/resource.h>

#include "sim/workload/open_trace.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom::workload;

namespace {

// Peak resident memory of this process so far, in bytes (Linux reports KiB).
long peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss * 1024L;
}

}  // namespace

TEST_CASE("a 1,000,000-row Azure trace streams in bounded memory") {
  const auto path = headroom::test::temp_dir("stream") / "million.csv";
  constexpr long kRows = 1'000'000;
  {
    // Written line by line, so that writing it does not raise the peak either.
    std::FILE* f = std::fopen(path.string().c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n", f);
    for (long i = 0; i < kRows; ++i) {
      const long us = i * 3456;  // one row every 3.456 ms: 3,456 s in all
      const long s = us / 1'000'000;
      std::fprintf(f, "2023-11-16 %02ld:%02ld:%02ld.%06ld0,%ld,%ld\n", 18 + s / 3600, (s / 60) % 60, s % 60,
                   us % 1'000'000, 1 + i % 8000, 1 + i % 500);
    }
    std::fclose(f);
  }
  const auto file_bytes = static_cast<long>(std::filesystem::file_size(path));
  REQUIRE(file_bytes > 35'000'000);

  const long before = peak_rss_bytes();
  auto reader = open_trace(path);
  Request r;
  long n = 0;
  double input_sum = 0, last_arrival = 0;
  bool ids_in_order = true;
  while (reader->next(r)) {
    ids_in_order &= r.id == static_cast<std::uint64_t>(n);
    input_sum += static_cast<double>(r.input_tokens);
    last_arrival = r.arrival_s;
    ++n;
  }
  const long growth = peak_rss_bytes() - before;
  std::filesystem::remove(path);

  CHECK(n == kRows);
  CHECK(ids_in_order);
  CHECK(last_arrival == Approx((kRows - 1) * 0.003456).margin(1e-9));
  CHECK(reader->stats().rows == static_cast<std::uint64_t>(kRows));
  // sum of 1 + i % 8000 over a million rows: 125 full cycles of 1..8000.
  CHECK(input_sum == 125.0 * 8000 * 8001 / 2);
  // The reader holds one 1 MiB line buffer; the file is over 35 MB. Allow the buffer, stdio's
  // own and allocator slack, far below the file's size.
  INFO("peak RSS grew by " << growth << " bytes while reading " << file_bytes << " bytes");
  CHECK(growth < 8L * 1024 * 1024);
}
