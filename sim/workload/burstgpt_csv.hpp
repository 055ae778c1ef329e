#pragma once
// BurstGPT (HPMLL/BurstGPT data/BurstGPT_*.csv; Azure OpenAI GPT-3.5/GPT-4 API logs):
//   Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
//   5,ChatGPT,472,18,490,Conversation log
// Timestamp is seconds from the start of the collection. Model, Total tokens and Log Type are
// not used (the later BurstGPT_3 columns Session ID and Elapsed time are allowed and ignored).
// Failed requests have "Response tokens" 0: see TraceOptions::keep_zero_output.
#include "sim/workload/csv_trace_reader.hpp"

namespace headroom::workload {

class BurstGptCsvReader final : public CsvTraceReader {
 public:
  BurstGptCsvReader(std::unique_ptr<LineReader> lines, std::string_view header, TraceOptions options);

 private:
  void parse_row(std::string_view line, Request& r, RowTime& time) override;
  std::size_t time_, input_, output_;
};

}  // namespace headroom::workload
