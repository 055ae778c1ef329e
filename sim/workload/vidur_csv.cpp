#include "sim/workload/vidur_csv.hpp"

#include "sim/workload/field_parse.hpp"

namespace headroom::workload {

VidurCsvReader::VidurCsvReader(std::unique_ptr<LineReader> lines, std::string_view header, TraceOptions options)
    : CsvTraceReader(std::move(lines), header, TraceFormat::vidur_csv, options, /*timed=*/true),
      time_(column("arrived_at")),
      input_(column("num_prefill_tokens")),
      output_(column("num_decode_tokens")) {}

void VidurCsvReader::parse_row(std::string_view line, Request& r, RowTime& time) {
  split(line);
  time.text = field(time_);
  if (!parse_seconds_as_ns(time.text, time.ns))
    bad_row("column " + std::to_string(time_ + 1) + " (" + column_name(time_) +
            "): expected a non-negative number of seconds, got '" + std::string(time.text) + "'");
  r.input_tokens = tokens_at(input_);
  r.output_tokens = tokens_at(output_);
}

}  // namespace headroom::workload
