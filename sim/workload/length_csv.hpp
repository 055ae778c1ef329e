#pragma once
// Length-only CSVs (vidur/etalon data/processed_traces/*_stats_llama2_tokenizer*.csv):
//   num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio
//   1047,1368,2415,0.7653508771929824
// No arrival times: every request has arrival_s 0. Pair the file with a synthetic arrival
// process (FileLengths) to replay it; the extra columns are not used.
#include "sim/workload/csv_trace_reader.hpp"

namespace headroom::workload {

class LengthCsvReader final : public CsvTraceReader {
 public:
  LengthCsvReader(std::unique_ptr<LineReader> lines, std::string_view header, TraceOptions options);

 private:
  void parse_row(std::string_view line, Request& r, RowTime& time) override;
  std::size_t input_, output_;
};

}  // namespace headroom::workload
