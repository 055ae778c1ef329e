#pragma once
// Vidur's processed traces (microsoft/vidur data/processed_traces/splitwise_{conv,code}.csv):
//   arrived_at,num_prefill_tokens,num_decode_tokens
//   4.314579,396,109
// arrived_at is seconds from the first request (these files are the Azure 2023 rows rebased).
#include "sim/workload/csv_trace_reader.hpp"

namespace headroom::workload {

class VidurCsvReader final : public CsvTraceReader {
 public:
  VidurCsvReader(std::unique_ptr<LineReader> lines, std::string_view header, TraceOptions options);

 private:
  void parse_row(std::string_view line, Request& r, RowTime& time) override;
  std::size_t time_, input_, output_;
};

}  // namespace headroom::workload
