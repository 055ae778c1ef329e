#include "sim/workload/azure_csv.hpp"

#include "sim/core/text_file.hpp"
#include "sim/workload/wall_clock.hpp"

namespace headroom::workload {

AzureCsvReader::AzureCsvReader(std::unique_ptr<LineReader> lines, std::string_view header, TraceOptions options)
    : CsvTraceReader(std::move(lines), header, TraceFormat::azure_csv, options, /*timed=*/true),
      time_(column("TIMESTAMP")),
      input_(column("ContextTokens")),
      output_(column("GeneratedTokens")) {}

void AzureCsvReader::parse_row(std::string_view line, Request& r, RowTime& time) {
  split(line);
  time.text = field(time_);
  if (!parse_wall_clock_ns(time.text, time.ns))
    bad_row("column " + std::to_string(time_ + 1) + " (" + column_name(time_) +
            "): expected a time like '2023-11-16 18:15:46.6805900', got '" + printable(time.text) + "'");
  r.input_tokens = tokens_at(input_);
  r.output_tokens = tokens_at(output_);
}

}  // namespace headroom::workload
