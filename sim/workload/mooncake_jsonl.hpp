#pragma once
// Mooncake traces (kvcache-ai/Mooncake FAST25-release/traces/*.jsonl), one JSON object a line:
//   {"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, ...]}
// timestamp is milliseconds from the start; hash_ids name the prompt's 512-token blocks and are
// kept as Request::prefix_hashes (they drive prefix-cache reuse). A row's hash_ids must number
// ceil(input_length / 512); a row without hash_ids has no prefix hashes. Other keys are ignored.
// Each line is scanned in place (no JSON library, no allocation once the hash vector has grown).
#include "sim/workload/trace_reader.hpp"

namespace headroom::workload {

class MooncakeJsonlReader final : public TraceReader {
 public:
  MooncakeJsonlReader(std::unique_ptr<LineReader> lines, TraceOptions options);

 private:
  void parse_row(std::string_view line, Request& r, RowTime& time) override;
};

}  // namespace headroom::workload
