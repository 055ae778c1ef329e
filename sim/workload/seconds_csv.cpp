#include "sim/workload/seconds_csv.hpp"

#include "sim/core/text_file.hpp"
#include "sim/workload/field_parse.hpp"

namespace headroom::workload {

SecondsCsvReader::SecondsCsvReader(std::unique_ptr<LineReader> lines, std::string_view header, TraceFormat format,
                                   const SecondsCsvColumns& columns, TraceOptions options)
    : CsvTraceReader(std::move(lines), header, format, options, /*timed=*/true),
      time_(column(columns.time)),
      input_(column(columns.input)),
      output_(column(columns.output)) {}

void SecondsCsvReader::parse_row(std::string_view line, Request& r, RowTime& time) {
  split(line);
  time.text = field(time_);
  if (!parse_seconds_as_ns(time.text, time.ns))
    bad_row("column " + std::to_string(time_ + 1) + " (" + column_name(time_) +
            "): expected a non-negative number of seconds, got '" + printable(time.text) + "'");
  r.input_tokens = tokens_at(input_);
  r.output_tokens = tokens_at(output_);
}

}  // namespace headroom::workload
