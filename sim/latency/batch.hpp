#pragma once
// What one engine step computes, summarised as sums so that the latency model costs the same for
// a batch of 1 or 1,000 sequences and never allocates: the simulator builds one per step.
//
// A prefill chunk is `new_tokens` prompt tokens of one sequence whose first `cached` tokens are
// already in the KV cache (a prefix-cache hit or an earlier chunk of a chunked prefill). A decode
// sequence adds one token to a sequence holding `context` tokens in the KV cache.
#include <cstdint>

namespace headroom::latency {

struct Batch {
  // Prefill chunks.
  std::int64_t prefill_chunks = 0;
  std::int64_t prefill_tokens = 0;   // Σ new tokens
  std::int64_t prefill_cached = 0;   // Σ tokens already cached before each chunk
  // Σ query-key pairs of causal attention: token i of a chunk (0-based) attends to the cached
  // tokens and to tokens 0..i of its own chunk, so a chunk adds new·cached + new·(new+1)/2.
  // A double: it reaches 10^12 and only ever multiplies a FLOP count.
  double prefill_attention_pairs = 0;

  // Decode sequences: one new token each.
  std::int64_t decode_sequences = 0;
  std::int64_t decode_context = 0;   // Σ tokens cached before the step (each attends to context + 1)

  // The step replays a captured CUDA graph (set by the engine model: vLLM and SGLang capture
  // decode batches up to a maximum size), so kernel launches cost one graph launch.
  bool cuda_graph = false;

  void add_prefill(std::int64_t new_tokens, std::int64_t cached) {
    prefill_chunks += 1;
    prefill_tokens += new_tokens;
    prefill_cached += cached;
    const double n = static_cast<double>(new_tokens);
    prefill_attention_pairs += n * static_cast<double>(cached) + n * (n + 1) / 2;
  }
  void add_decode(std::int64_t context) {
    decode_sequences += 1;
    decode_context += context;
  }

  // Rows of every token-wise GEMM: each prefill token and each decode sequence is one row.
  std::int64_t tokens() const { return prefill_tokens + decode_sequences; }
  // Sequences that sample a token: the engines compute logits only for the last position of each
  // sequence in the step (vLLM logits_indices, SGLang's last-token gather).
  std::int64_t sampled_sequences() const { return prefill_chunks + decode_sequences; }
  bool empty() const { return tokens() == 0; }
};

}  // namespace headroom::latency
