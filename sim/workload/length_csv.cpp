#include "sim/workload/length_csv.hpp"

namespace headroom::workload {

LengthCsvReader::LengthCsvReader(std::unique_ptr<LineReader> lines, std::string_view header, TraceOptions options)
    : CsvTraceReader(std::move(lines), header, TraceFormat::length_csv, options, /*timed=*/false),
      input_(column("num_prefill_tokens")),
      output_(column("num_decode_tokens")) {}

void LengthCsvReader::parse_row(std::string_view line, Request& r, RowTime&) {
  split(line);
  r.input_tokens = tokens_at(input_);
  r.output_tokens = tokens_at(output_);
}

}  // namespace headroom::workload
