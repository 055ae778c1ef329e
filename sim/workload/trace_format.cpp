#include "sim/workload/trace_format.hpp"

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "sim/core/text_file.hpp"
#include "sim/core/error.hpp"
#include "sim/workload/csv_split.hpp"

namespace headroom::workload {

std::string_view to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::azure_csv: return "Azure CSV";
    case TraceFormat::vidur_csv: return "Vidur CSV";
    case TraceFormat::mooncake_jsonl: return "Mooncake JSONL";
    case TraceFormat::burstgpt_csv: return "BurstGPT CSV";
    case TraceFormat::length_csv: return "length-only CSV";
  }
  return "?";
}

TraceFormat detect_format(std::string_view first_line, const std::string& file) {
  std::string_view line = first_line;
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  if (!line.empty() && line.front() == '{') return TraceFormat::mooncake_jsonl;
  std::vector<std::string_view> names;
  split_csv(line, names);
  auto has = [&](std::initializer_list<std::string_view> wanted) {
    return std::all_of(wanted.begin(), wanted.end(), [&](std::string_view w) {
      return std::find(names.begin(), names.end(), w) != names.end();
    });
  };
  if (has({"TIMESTAMP", "ContextTokens", "GeneratedTokens"})) return TraceFormat::azure_csv;
  if (has({"arrived_at", "num_prefill_tokens", "num_decode_tokens"})) return TraceFormat::vidur_csv;
  if (has({"Timestamp", "Request tokens", "Response tokens"})) return TraceFormat::burstgpt_csv;
  if (has({"num_prefill_tokens", "num_decode_tokens"})) return TraceFormat::length_csv;
  std::string shown = printable(first_line.substr(0, 80));
  if (first_line.size() > 80) shown += "...";
  throw InputError(file + ":1: unrecognised trace format: first line '" + shown +
                   "' (expected a Mooncake JSONL object or a CSV header with the columns "
                   "TIMESTAMP,ContextTokens,GeneratedTokens (Azure), "
                   "arrived_at,num_prefill_tokens,num_decode_tokens (Vidur), "
                   "Timestamp,Request tokens,Response tokens (BurstGPT) or "
                   "num_prefill_tokens,num_decode_tokens (lengths only))");
}

}  // namespace headroom::workload
