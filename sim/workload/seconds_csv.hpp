#pragma once
// CSV traces whose time column is seconds from the start, read by column name:
//
// Vidur's processed traces (microsoft/vidur data/processed_traces/splitwise_{conv,code}.csv):
//   arrived_at,num_prefill_tokens,num_decode_tokens
//   4.314579,396,109
// arrived_at is seconds from the first request (these files are the Azure 2023 rows rebased).
//
// BurstGPT (HPMLL/BurstGPT data/BurstGPT_*.csv; Azure OpenAI GPT-3.5/GPT-4 API logs):
//   Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
//   5,ChatGPT,472,18,490,Conversation log
// Timestamp is seconds from the start of the collection. Model, Total tokens and Log Type are
// not used (the later BurstGPT_3 columns Session ID and Elapsed time are allowed and ignored).
// Failed requests have "Response tokens" 0: see TraceOptions::keep_zero_output.
#include "sim/workload/csv_trace_reader.hpp"

namespace headroom::workload {

struct SecondsCsvColumns {
  const char* time;
  const char* input;
  const char* output;
};
inline constexpr SecondsCsvColumns kVidurColumns{"arrived_at", "num_prefill_tokens", "num_decode_tokens"};
inline constexpr SecondsCsvColumns kBurstGptColumns{"Timestamp", "Request tokens", "Response tokens"};

class SecondsCsvReader final : public CsvTraceReader {
 public:
  SecondsCsvReader(std::unique_ptr<LineReader> lines, std::string_view header, TraceFormat format,
                   const SecondsCsvColumns& columns, TraceOptions options);

 private:
  void parse_row(std::string_view line, Request& r, RowTime& time) override;
  std::size_t time_, input_, output_;
};

}  // namespace headroom::workload
