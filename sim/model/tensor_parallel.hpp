#pragma once
// How tensor parallelism splits a model across ranks (as vLLM and SGLang do), and the checks
// that a TP size fits the model. Every rank gets the same shapes, so rank 0 stands for all.
#include <cstdint>

#include "sim/model/model_config.hpp"

namespace headroom::model {

struct TensorParallelShard {
  int tp = 1;
  int q_heads = 0;          // attention heads per rank
  int kv_heads = 0;         // KV heads per rank: kv_heads / tp, or 1 (replicated) when tp > kv_heads
  int kv_head_replicas = 1; // ranks holding a copy of each KV head
  std::int64_t vocab = 0;   // rows of the embedding / lm_head per rank, padding included
};

// vLLM vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE = 64; the vocabulary is padded
// up to a multiple of 64 (pad_vocab_size), then divided evenly across ranks.
inline constexpr int kVocabPadding = 64;

// Throws InputError when tp < 1 or does not divide what vLLM requires to be divisible
// (attention heads; KV heads or tp by KV heads; MLP and expert widths; padded vocabulary).
TensorParallelShard tensor_parallel_shard(const ModelConfig& config, int tp);

}  // namespace headroom::model
