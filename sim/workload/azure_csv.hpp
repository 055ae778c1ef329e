#pragma once
// Azure LLM inference traces (Azure/AzurePublicDataset, AzureLLMInferenceTrace_{conv,code}.csv,
// 2023, and the 2024 week-long ones with the same schema):
//   TIMESTAMP,ContextTokens,GeneratedTokens
//   2023-11-16 18:15:46.6805900,374,44
// TIMESTAMP is wall-clock text with 7 fractional digits and no zone; arrivals are the exact
// differences from the first row (see wall_clock.hpp).
#include "sim/workload/csv_trace_reader.hpp"

namespace headroom::workload {

class AzureCsvReader final : public CsvTraceReader {
 public:
  AzureCsvReader(std::unique_ptr<LineReader> lines, std::string_view header, TraceOptions options);

 private:
  void parse_row(std::string_view line, Request& r, RowTime& time) override;
  std::size_t time_, input_, output_;
};

}  // namespace headroom::workload
