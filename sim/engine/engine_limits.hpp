#pragma once
// Limits on the engines' start-up knobs (docs/limits.md says why each is where it is); resolve()
// checks every knob against them, so a scenario's value past one is an error naming its key.
#include <cstdint>

#include "sim/model/model_limits.hpp"

namespace headroom::engine::limits {

// Tokens of one step: vLLM max_num_batched_tokens, SGLang chunked_prefill_size and
// max_prefill_tokens, LightLLM batch_max_tokens and chunked_prefill_size (one forward each).
inline constexpr std::int64_t kMaxBatchTokens = model::limits::kMaxStepTokens;
// Requests running at once: vLLM max_num_seqs, SGLang max_running_requests, LightLLM
// running_max_req_size (a step samples one row per request).
inline constexpr std::int64_t kMaxRunningRequests = model::limits::kMaxStepSeqs;
// Tokens of one request: vLLM max_model_len, SGLang context_length, LightLLM max_req_total_len and
// graph_max_len_in_batch; no model reaches this (model_limits.hpp kMaxPositionEmbeddings).
inline constexpr std::int64_t kMaxContextTokens = model::limits::kMaxPositionEmbeddings;
// vLLM KV blocks (num_gpu_blocks_override, or what kv_cache_memory_bytes gives): the scheduler
// keeps ~50 bytes per block (ids are 32-bit), so 2^24 blocks cost ~0.8 GB; the largest real cache
// (a 0.5B model on a 141 GB GPU, blocks of 16 tokens) has ~0.7 million.
inline constexpr std::int64_t kMaxKvBlocks = std::int64_t{1} << 24;
// SGLang max_total_tokens and LightLLM max_total_token_num: 2^32 tokens, 350 times the largest
// real pool; tokens × bytes per token stays within 64 bits below this.
inline constexpr std::int64_t kMaxKvTokens = std::int64_t{1} << 32;

// Simulated seconds: arrivals stop at 10^9 s (workload_limits.hpp); the serving of the last ones may
// run past it, but a clock at 2·10^9 s means a step latency gone wrong (a GPU profile or fitted
// latency model with absurd figures), and past it steps stop moving the clock (a double resolves
// 0.24 µs there).
inline constexpr double kMaxClockS = 2e9;

}  // namespace headroom::engine::limits
