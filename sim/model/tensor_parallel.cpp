#include "sim/model/tensor_parallel.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace headroom::model {

namespace {

void require_divisible(const ModelConfig& config, std::int64_t total, int tp, std::string_view what) {
  if (total % tp != 0)
    throw InputError(fmt::format("model '{}': {} ({}) must be divisible by tensor parallel size ({})", config.name,
                                 what, total, tp));
}

}  // namespace

TensorParallelShard tensor_parallel_shard(const ModelConfig& config, int tp) {
  if (tp < 1) throw InputError(fmt::format("tensor parallel size must be at least 1, got {}", tp));
  TensorParallelShard shard;
  shard.tp = tp;
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
    require_divisible(config, config.intermediate, tp, "intermediate_size");
  if (config.is_moe()) {
    require_divisible(config, config.moe_intermediate, tp, "moe intermediate size");
    bool has_dense_layer = false;
    for (int l = 0; l < config.layers; ++l) has_dense_layer |= !config.is_moe_layer(l);
    if (has_dense_layer) require_divisible(config, config.intermediate, tp, "intermediate_size");
  }
  std::int64_t padded = static_cast<std::int64_t>(round_up(static_cast<Bytes>(config.vocab), kVocabPadding));
  require_divisible(config, padded, tp, "padded vocabulary");
  shard.vocab = padded / tp;
  return shard;
}

}  // namespace headroom::model
