#pragma once
// Which decoder layers attend to the whole context and which to a sliding window of recent tokens
// (gpt-oss `layer_types`, Gemma 2 every other layer, Gemma 3 `layer_types`), grouped by kind as the
// engines size their KV pools from it (vLLM vllm/v1/core/kv_cache_utils.py get_kv_cache_groups,
// SGLang's SWAKVPool): the per-layer-type grouping, apart from tensor-parallel sharding.
#include <vector>

#include "sim/model/model_config.hpp"

namespace headroom::model {

// chunked_local: Llama 4's RoPE layers attend within their attention_chunk_size-token chunk only
// (vLLM ChunkedLocalAttention; SGLang gives them its SWA pool with the chunk as the window).
enum class AttentionKind { full, sliding_window, chunked_local };

struct AttentionLayers {
  AttentionKind kind = AttentionKind::full;
  int window = 0;           // sliding_window or attention_chunk_size tokens; 0 for full attention
  std::vector<int> layers;  // decoder layers (0-based), ascending
  bool operator==(const AttentionLayers&) const = default;
};

// One entry per kind, in the order of each kind's first layer (vLLM groups its layers in that
// order); a model without windowed layers gives one full-attention entry of every layer.
std::vector<AttentionLayers> attention_layer_kinds(const ModelConfig& config);

inline bool has_sliding_window(const ModelConfig& config) { return !config.sliding_layers.empty(); }
inline bool has_chunked_attention(const ModelConfig& config) { return !config.chunked_layers.empty(); }

}  // namespace headroom::model
