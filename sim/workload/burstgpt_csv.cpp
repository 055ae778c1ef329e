#include "sim/workload/burstgpt_csv.hpp"

#include "sim/workload/field_parse.hpp"

namespace headroom::workload {

BurstGptCsvReader::BurstGptCsvReader(std::unique_ptr<LineReader> lines, std::string_view header,
                                     TraceOptions options)
    : CsvTraceReader(std::move(lines), header, TraceFormat::burstgpt_csv, options, /*timed=*/true),
      time_(column("Timestamp")),
      input_(column("Request tokens")),
      output_(column("Response tokens")) {}

void BurstGptCsvReader::parse_row(std::string_view line, Request& r, RowTime& time) {
  split(line);
  time.text = field(time_);
  if (!parse_seconds_as_ns(time.text, time.ns))
    bad_row("column " + std::to_string(time_ + 1) + " (" + column_name(time_) +
            "): expected a non-negative number of seconds, got '" + std::string(time.text) + "'");
  r.input_tokens = tokens_at(input_);
  r.output_tokens = tokens_at(output_);
}

}  // namespace headroom::workload
