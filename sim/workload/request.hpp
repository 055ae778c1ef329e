#pragma once
// One request of a workload, as the simulator sees it: when it arrives and how many tokens it
// brings and asks for.
#include <cstdint>
#include <vector>

namespace headroom::workload {

using Tokens = std::int64_t;

// Mooncake's hash_ids each name one block of 512 prompt tokens (Mooncake FAST25-release trace
// README; checked on every row of both public traces: len(hash_ids) == ceil(input_length/512)).
inline constexpr Tokens kMooncakeBlockTokens = 512;

struct Request {
  std::uint64_t id = 0;       // 0, 1, 2, ... in the order the source hands requests out
  double arrival_s = 0.0;     // seconds from the start of the trace (its first row)
  Tokens input_tokens = 0;    // prompt / context tokens
  Tokens output_tokens = 0;   // tokens to generate
  // Hashes of the prompt's leading blocks (Mooncake hash_ids): equal leading hashes mean a
  // shared prefix whose KV blocks a prefix cache can reuse. Empty when the trace has none.
  std::vector<std::uint64_t> prefix_hashes;
  Tokens prefix_block_tokens = 0;  // tokens per hash (512 for Mooncake); 0 when none
};

}  // namespace headroom::workload
