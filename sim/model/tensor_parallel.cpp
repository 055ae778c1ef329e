#include "sim/model/tensor_parallel.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace headroom::model {

namespace {

void require_divisible(const ModelConfig& config, std::int64_t total, int tp, std::string_view what,
                       std::string_view group = "tensor parallel size") {
  if (total % tp != 0)
    throw InputError(fmt::format("model '{}': {} ({}) must be divisible by {} ({})", config.name, what, total, group, tp));
}

void require_group(int size, std::string_view what) {
  if (size < 1) throw InputError(fmt::format("{} must be at least 1, got {}", what, size));
}

}  // namespace

RankPlacement RankPlacement::tensor_parallel(int tp) {
  RankPlacement p;
  p.attn_tp = p.dense_tp = p.moe_tp = tp;
  return p;
}

std::vector<int> pipeline_stage_layers(int layers, int pp) {
  std::vector<int> stages(static_cast<std::size_t>(pp), layers / pp);
  for (int i = 2; i < layers % pp + 2; ++i) stages[static_cast<std::size_t>(pp - i)] += 1;
  return stages;
}

int local_expert_count(int experts, int ep, int ep_rank) {
  return experts / ep + (ep_rank < experts % ep ? 1 : 0);
}

TensorParallelShard tensor_parallel_shard(const ModelConfig& config, int tp) {
  if (tp < 1) throw InputError(fmt::format("tensor parallel size must be at least 1, got {}", tp));
  return rank_shard(config, RankPlacement::tensor_parallel(tp));
}

TensorParallelShard rank_shard(const ModelConfig& config, const RankPlacement& p) {
  require_group(p.attn_tp, "attention tensor parallel size");
  require_group(p.dense_tp, "tensor parallel size");
  require_group(p.moe_tp, "expert tensor parallel size");
  require_group(p.moe_ep, "expert parallel size");
  require_group(p.pp, "pipeline parallel size");
  TensorParallelShard shard;
  shard.tp = p.dense_tp;
  shard.attn_tp = p.attn_tp;
  shard.moe_tp = p.moe_tp;
  const int tp = p.attn_tp;
  // vllm/config/parallel.py verify_with_parallel_config: heads must divide evenly.
  require_divisible(config, config.heads, tp, "total number of attention heads");
  shard.q_heads = config.heads / tp;
  if (config.is_mla()) {
    // The MLA latent is one shared "head", replicated on every rank (docs/serving-memory-model.md §7 notes).
    shard.kv_heads = 1;
    shard.kv_head_replicas = tp;
  } else if (config.kv_heads >= tp) {
    // vllm linear.py QKVParallelLinear: total_num_kv_heads % tp_size == 0, kv_heads / tp per rank.
    require_divisible(config, config.kv_heads, tp, "total number of KV heads");
    shard.kv_heads = config.kv_heads / tp;
  } else {
    // QKVParallelLinear: tp_size % total_num_kv_heads == 0; each rank holds one replicated KV head.
    if (tp % config.kv_heads != 0)
      throw InputError(fmt::format(
          "model '{}': tensor parallel size ({}) must be a multiple of the number of KV heads ({}) when it exceeds it",
          config.name, tp, config.kv_heads));
    shard.kv_heads = 1;
    shard.kv_head_replicas = tp / config.kv_heads;
  }
  if (config.intermediate > 0 && config.experts == 0)
    require_divisible(config, config.intermediate, p.dense_tp, "intermediate_size");
  shard.local_experts = config.experts;
  if (config.is_moe()) {
    // fused_moe/config.py: intermediate_size_per_partition = moe_intermediate / moe tp size.
    require_divisible(config, config.moe_intermediate, p.moe_tp, "moe intermediate size", "expert tensor parallel size");
    bool has_dense_layer = false;
    for (int l = 0; l < config.layers; ++l) has_dense_layer |= !config.is_moe_layer(l);
    if (has_dense_layer) require_divisible(config, config.intermediate, p.dense_tp, "intermediate_size");
    if (p.moe_ep > config.experts)
      throw InputError(fmt::format("model '{}': expert parallel size ({}) exceeds the number of experts ({})",
                                   config.name, p.moe_ep, config.experts));
    shard.local_experts = local_expert_count(config.experts, p.moe_ep, p.ep_rank);
  } else if (p.moe_ep > 1) {
    throw InputError(fmt::format("model '{}' has no experts: expert parallel size must be 1, got {}", config.name, p.moe_ep));
  }
  std::int64_t padded = static_cast<std::int64_t>(round_up(static_cast<Bytes>(config.vocab), kVocabPadding));
  require_divisible(config, padded, p.dense_tp, "padded vocabulary");
  shard.vocab = padded / p.dense_tp;
  // vllm/config/parallel.py: pipeline stages hold at least one layer each (get_pp_indices).
  if (p.pp > config.layers)
    throw InputError(fmt::format("model '{}': pipeline parallel size ({}) exceeds the number of layers ({})",
                                 config.name, p.pp, config.layers));
  const std::vector<int> stages = pipeline_stage_layers(config.layers, p.pp);
  for (int s = 0; s < p.pp_rank; ++s) shard.first_layer += stages[static_cast<std::size_t>(s)];
  shard.end_layer = shard.first_layer + stages[static_cast<std::size_t>(p.pp_rank)];
  const bool first = p.pp_rank == 0, last = p.pp_rank == p.pp - 1;
  // vllm llama.py LlamaModel: embed_tokens on the first rank, or on the last one too when tied to lm_head.
  shard.has_embedding = first || (last && config.tie_word_embeddings);
  shard.has_lm_head = last;
  return shard;
}

}  // namespace headroom::model
