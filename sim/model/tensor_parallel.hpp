#pragma once
// The one place where a model is split across ranks: which heads, widths, experts, vocabulary rows
// and decoder layers one rank holds (tensor, pipeline and expert parallelism as vLLM and SGLang
// shard them). The engine decides the groups a rank belongs to (sim/engine/parallel_ranks.hpp,
// from its own rules) and passes them down as a RankPlacement; weights, KV layout and forward
// programs read only the TensorParallelShard computed here.
#include <cstdint>
#include <vector>

#include "sim/model/model_config.hpp"

namespace headroom::model {

// The parallel groups of one rank, as sizes and this rank's index in them.
struct RankPlacement {
  int attn_tp = 1;   // ranks splitting attention heads and the KV cache (SGLang DP attention: tp / dp)
  int dense_tp = 1;  // ranks splitting dense MLPs, shared experts and the vocabulary (tp)
  int moe_tp = 1;    // ranks splitting each routed expert's intermediate width
  int moe_ep = 1;    // ranks splitting the routed experts between them
  int ep_rank = 0;   // this rank's index among the moe_ep ranks
  int pp = 1;        // pipeline stages
  int pp_rank = 0;   // this rank's stage
  // Plain tensor parallelism: every group is the TP group, one stage.
  static RankPlacement tensor_parallel(int tp);
  bool operator==(const RankPlacement&) const = default;
};

struct TensorParallelShard {
  int tp = 1;               // dense_tp: the vocabulary and dense-MLP split
  int attn_tp = 1;
  int moe_tp = 1;
  int q_heads = 0;          // attention heads per rank
  int kv_heads = 0;         // KV heads per rank: kv_heads / attn_tp, or 1 (replicated) when attn_tp > kv_heads
  int kv_head_replicas = 1; // ranks holding a copy of each KV head
  std::int64_t vocab = 0;   // rows of the embedding / lm_head per rank, padding included
  int local_experts = 0;    // routed experts on this rank (all of them without EP)
  int first_layer = 0;      // decoder layers [first_layer, end_layer) live on this rank's stage
  int end_layer = 0;
  bool has_embedding = true;  // the first stage (and the last one when the embeddings are tied)
  bool has_lm_head = true;    // the last stage: final norm, lm_head, logits and sampler
  int stage_layers() const { return end_layer - first_layer; }
};

// vLLM vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE = 64; the vocabulary is padded
// up to a multiple of 64 (pad_vocab_size), then divided evenly across ranks.
inline constexpr int kVocabPadding = 64;

// Throws InputError when a group size is below 1 or does not divide what vLLM requires to be
// divisible (attention heads; KV heads or the TP size by KV heads; MLP and expert widths; padded
// vocabulary), when there are more expert-parallel ranks than experts or more stages than layers.
TensorParallelShard rank_shard(const ModelConfig& config, const RankPlacement& placement);
TensorParallelShard tensor_parallel_shard(const ModelConfig& config, int tp);

// vllm/distributed/utils.py get_pp_indices (v0.11): layers // pp per stage, the remainder one each
// to the stages before the last, from the second-to-last backwards. The layer count of each stage.
std::vector<int> pipeline_stage_layers(int layers, int pp);

// vllm/model_executor/layers/fused_moe determine_expert_map: experts // ep each, one more on the
// first experts % ep ranks.
int local_expert_count(int experts, int ep, int ep_rank);

}  // namespace headroom::model
