#pragma once
// The rotary-embedding tables an engine builds on the GPU while it loads a model. They are not
// weights, but vLLM and SGLang allocate them among the weights (in a layer's attention module, the
// model constructed on the device) and LightLLM right after its request manager, so they take their
// bytes from the KV cache. The engine passes its storage rule down as data (RotaryRules), as it
// does its KV pool rules (docs/serving-memory-model.md §10).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/model/dtype.hpp"
#include "sim/model/model_config.hpp"
#include "sim/model/weights.hpp"

namespace headroom::model {

// How vLLM's and SGLang's get_rope store the table (vllm/model_executor/layers/rotary_embedding,
// sglang/srt/layers/rotary_embedding.py): one cos_sin_cache [positions, rotary_dim] per distinct set
// of rope parameters, shared by every layer that asks for the same set (_ROPE_DICT).
struct RotaryRules {
  // SGLang on CUDA keeps the cache in float32 whatever the model dtype ("cache needs to be in FP32
  // for numerical stability", PR #3134); vLLM converts it to the dtype the model file asks for.
  bool float32 = false;
};

// One table as the engine allocates it: a tensor of `positions` rows of `width` values.
struct RotaryTable {
  std::string name;            // the buffer's name, e.g. model.layers.0.self_attn.rotary_emb.cos_sin_cache
  std::vector<int> layers;     // decoder layers (0-based) that share it; the first on a rank builds it
  std::int64_t positions = 0;
  int width = 0;               // values per position: cos and sin halves of rotary_dim together
  DType dtype = DType::bf16;
  bool before_attention = false;  // built before the layer's attention weights (gpt-oss), else after o_proj
  Bytes bytes() const;
  bool operator==(const RotaryTable&) const = default;
};

// The rows get_rope builds for a rope_scaling: max_position (none, llama3), max_position × factor
// (linear, dynamic), original_max_position_embeddings × factor (yarn and DeepSeek's deepseek_yarn),
// torch.arange of a float end counting ceil(end) rows.
std::int64_t get_rope_positions(RopeScaling scaling, double factor, std::int64_t max_position,
                                std::int64_t original_max_position);

// vLLM's and SGLang's tables for a model, in the order its layers build them: one for every layer
// (MLA: qk_rope_head_dim wide), none for Llama 4's NoPE layers, a local and a global one for Gemma 3
// when their rope parameters differ (ModelConfig::local_rope).
std::vector<RotaryTable> rotary_tables(const ModelConfig& config, const RotaryRules& rules);

// Where each table falls in the rank's load order: the index of the weight tensor it is allocated
// before (weights.tensors.size(): after the last), or -1 when none of its layers is on this rank.
std::vector<std::ptrdiff_t> rotary_load_positions(const WeightList& weights, const std::vector<RotaryTable>& tables);

}  // namespace headroom::model
