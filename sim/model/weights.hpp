#pragma once
// The weight tensors one tensor-parallel rank allocates while loading a model, in module order,
// with vLLM's layout (SGLang's is the same): fused qkv_proj and gate_up_proj, one 3-D tensor per
// expert group (FusedMoE w13/w2), vocab-parallel embedding and lm_head padded to a multiple of 64.
// Column-parallel layers (q/k/v, gate/up, MLA q_b/kv_b) split their output rows, row-parallel
// ones (o_proj, down_proj) their input columns; norms, routers and the MLA down-projections
// (fused_qkv_a_proj) are replicated; experts are split by TP on their intermediate width.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/model/model_config.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::model {

struct WeightTensor {
  std::string name;                 // vLLM parameter name, e.g. model.layers.0.self_attn.qkv_proj.weight
  std::vector<std::int64_t> shape;  // per rank
  DType dtype = DType::bf16;
  bool is_scale = false;            // quantization metadata (scales, zeros, g_idx), not a model parameter
  int values_per_element = 1;       // packed weights: 8 int4 per int32 (GPTQ/AWQ), 2 fp4 per uint8
  std::int64_t elements() const;
  Bytes bytes() const;
};

struct WeightOptions {
  int tp = 1;
  // The rank's groups under pipeline, expert or data parallelism (tensor_parallel.hpp); absent:
  // plain tensor parallelism of `tp`.
  std::optional<RankPlacement> placement;
  // Add DeepSeek's multi-token-prediction module(s) as stored in the checkpoint (own embedding,
  // head, projection and one decoder layer each). vLLM loads them only for MTP speculative
  // decoding, as a separate draft model; the served model itself skips them.
  bool include_mtp = false;
  // Pad the vocabulary to vLLM's multiple of 64 (off: the checkpoint's logical sizes).
  bool pad_vocab = true;
};

struct WeightList {
  std::vector<WeightTensor> tensors;  // in allocation order
  std::int64_t parameters = 0;        // values of non-scale tensors on this rank (packed ones unpacked)
  Bytes bytes = 0;                    // all tensors on this rank, scales included
};

// Throws InputError when the TP size does not fit the model (tensor_parallel.hpp) or a quantized
// weight's shape on a rank does not fit its format (a packed or grouped dimension not divisible).
WeightList model_weights(const ModelConfig& config, const WeightOptions& options = {});

// The bytes one quantizable linear weight of [out, in] stores in the model's format, all its
// tensors together (packed values, scales, zeros, g_idx, as model_weights lays them out, scales
// of a row-parallel layer split as on one rank): what a GEMM reads of it. `expert`: a FusedMoE
// expert weight (MXFP4 quantizes only those; the other formats both). Throws InputError as
// model_weights does for a shape the format cannot hold.
Bytes linear_weight_bytes(const ModelConfig& config, std::int64_t out, std::int64_t in, bool expert);

// The model's parameter count as published: TP 1, unpadded vocabulary, no scales.
std::int64_t parameter_count(const ModelConfig& config, bool include_mtp = false);

}  // namespace headroom::model
