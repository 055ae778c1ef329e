#pragma once
// The trace formats the workload layer reads, and telling them apart from a file's first line.
#include <string>
#include <string_view>

namespace headroom::workload {

enum class TraceFormat {
  azure_csv,       // TIMESTAMP,ContextTokens,GeneratedTokens (Azure LLM inference traces 2023/2024)
  vidur_csv,       // arrived_at,num_prefill_tokens,num_decode_tokens (Vidur / Splitwise)
  mooncake_jsonl,  // {"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}
  burstgpt_csv,    // Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
  length_csv,      // num_prefill_tokens,num_decode_tokens,... (no arrival times)
};

std::string_view to_string(TraceFormat f);

// Decides the format from the first line of `file` (named in the error): a line starting with
// '{' is Mooncake JSONL; a CSV header is matched by its column names, in any order, extra
// columns allowed. Throws InputError "FILE:1: unrecognised trace format: ..." otherwise.
TraceFormat detect_format(std::string_view first_line, const std::string& file);

}  // namespace headroom::workload
