#include "sim/workload/azure_csv_writer.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/workload/wall_clock.hpp"

namespace headroom::workload {

std::uint64_t write_azure_csv(RequestSource& source, std::ostream& out, std::int64_t origin_ns) {
  out << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  std::uint64_t rows = 0;
  Request r;
  fmt::memory_buffer line;
  while (source.next(r)) {
    const auto ticks = static_cast<std::int64_t>(std::llround(r.arrival_s * 1e7));  // 100 ns
    line.clear();
    fmt::format_to(std::back_inserter(line), "{},{},{}\n", format_wall_clock_ns(origin_ns + ticks * 100),
                   r.input_tokens, r.output_tokens);
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
    ++rows;
  }
  return rows;
}

}  // namespace headroom::workload
