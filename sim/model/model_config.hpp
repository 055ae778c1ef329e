#pragma once
// A model architecture as plain data: the fields of a Hugging Face config.json that decide
// weight and KV-cache bytes. Built by the catalogue (catalogue.hpp) or read from a config.json
// (hf_config.hpp); weights.hpp and kv_layout.hpp derive sizes from it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/model/dtype.hpp"

namespace headroom::model {

// HF `model_type` values this simulator models.
enum class Architecture {
  llama, qwen2, qwen3, qwen3_moe, mixtral, deepseek_v3, mistral, deepseek_v2, gpt_oss, gemma2, gemma3_text, llama4
};

std::string_view architecture_name(Architecture architecture);  // the model_type string

// config.json's rope_scaling type ("rope_type", or "type" in older configs; absent or "default":
// none), the cases vLLM's get_rope dispatches on for the architectures above (rotary_cache.hpp).
enum class RopeScaling { none, linear, dynamic, llama3, yarn };
std::string_view rope_scaling_name(RopeScaling scaling);  // "default", "linear", ...
const std::vector<std::string>& supported_architectures();       // in the order above

// How weights were quantized in the checkpoint (HF `quantization_config`), as vLLM lays them out
// (weights.cpp names the tensors of each format).
struct WeightQuantization {
  enum class Method {
    none,
    fp8_block,    // fp8 weights, float32 scale per block_n x block_k block (quant_method fp8 + weight_block_size)
    fp8_tensor,   // fp8 weights, one float32 scale per logical weight (fp8; compressed-tensors strategy tensor)
    fp8_channel,  // fp8 weights, one float32 scale per output row (compressed-tensors strategy channel)
    gptq,         // int `bits` packed in int32 along the input, scales, zeros and g_idx (quant_method gptq)
    awq,          // int4 packed in int32 along the output, scales and zeros (quant_method awq)
    mxfp4,        // MoE experts only: fp4 pairs in uint8, one e8m0 scale per 32 (quant_method mxfp4)
    nvfp4,        // fp4 pairs in uint8, one fp8 scale per 16, float32 global scales (modelopt NVFP4)
    wna16,        // int `bits` packed in int32 along the input, group or channel scales (compressed-tensors pack-quantized)
  };
  Method method = Method::none;
  int block_n = 0;     // fp8_block: output rows per scale (weight_block_size[0])
  int block_k = 0;     // fp8_block: input columns per scale (weight_block_size[1])
  int bits = 0;        // gptq/awq/wna16: 4 (or 8 for gptq and wna16)
  int group_size = 0;  // gptq/awq/wna16: input columns per scale, 0 = the whole row (-1 in the config; wna16
                       // strategy channel); nvfp4 16
  bool act_order = false;           // gptq desc_act, wna16 actorder group: row-parallel layers keep their
                                    // scales whole on every rank, and a g_idx per input row
  bool static_input_scale = false;  // fp8_tensor/fp8_channel: a float32 input_scale per logical weight
  bool operator==(const WeightQuantization&) const = default;
};

std::string_view quantization_name(WeightQuantization::Method method);

// Llama 4's vision tower and multimodal projector (HF `vision_config` of Llama4ForConditionalGeneration),
// as vLLM builds them (vllm/model_executor/models/mllama4.py): weights only, kept in the model dtype.
struct VisionTower {
  int layers = 0;               // num_hidden_layers; 0: no vision tower
  int hidden = 0;               // hidden_size
  int intermediate = 0;         // intermediate_size (also the pixel-shuffle adapter's input)
  int heads = 0;                // num_attention_heads
  int image_size = 0;
  int patch_size = 0;
  int channels = 0;             // num_channels
  int projector_input = 0;      // projector_input_dim: the adapter's fc1 output
  int projector_output = 0;     // projector_output_dim: the adapter's fc2 output
  int output = 0;               // vision_output_dim: the multimodal projector's input
  bool projector_bias = false;  // multi_modal_projector_bias: the adapter's fc1/fc2 biases
  bool operator==(const VisionTower&) const = default;
};

struct ModelConfig {
  std::string name;
  Architecture architecture = Architecture::llama;

  int layers = 0;                  // num_hidden_layers
  int hidden = 0;                  // hidden_size
  int intermediate = 0;            // intermediate_size: dense MLP width (MoE models: their dense layers)
  int heads = 0;                   // num_attention_heads
  int kv_heads = 0;                // num_key_value_heads (MLA models: as written, unused for the cache)
  int head_dim = 0;                // per query/key head; MLA: qk_nope_head_dim + qk_rope_head_dim
  int vocab = 0;                   // vocab_size
  std::int64_t max_position = 0;   // max_position_embeddings
  bool tie_word_embeddings = false;
  bool qkv_bias = false;           // q/k/v projections carry a bias (Qwen2; Llama/Qwen3 attention_bias)
  bool o_proj_bias = false;        // o_proj carries a bias (Llama/Qwen3 attention_bias)

  // Mixture of experts; experts == 0 means a dense model.
  int experts = 0;                 // num_experts / num_local_experts / n_routed_experts
  int experts_per_token = 0;       // num_experts_per_tok (top-k)
  int moe_intermediate = 0;        // width of one expert (Mixtral: intermediate_size)
  int shared_experts = 0;          // n_shared_experts (DeepSeek), each moe_intermediate wide
  int first_k_dense = 0;           // first_k_dense_replace (DeepSeek): layers [0, k) are dense
  std::vector<int> dense_layers;   // mlp_only_layers (Qwen3-MoE): listed layers are dense
  int moe_layer_step = 1;          // moe_layer_freq (DeepSeek) / decoder_sparse_step (Qwen3-MoE)

  // Multi-head latent attention (DeepSeek); kv_lora_rank == 0 means ordinary MHA/GQA.
  int q_lora_rank = 0;             // 0: queries are projected directly from the hidden state
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;

  DType dtype = DType::bf16;       // dtype of unquantized weights and activations as served
  WeightQuantization quantization;
  int mtp_layers = 0;              // num_nextn_predict_layers: multi-token-prediction modules

  // Rotary position embedding (rotary_cache.hpp sizes the tables an engine builds from it).
  RopeScaling rope_scaling = RopeScaling::none;
  double rope_factor = 1;                        // rope_scaling.factor
  std::int64_t rope_original_max_position = 0;  // rope_scaling.original_max_position_embeddings (yarn)
  // Gemma 3: the sliding layers rotate with rope_local_base_freq and no scaling; true when that
  // differs from the global layers' rope (rope_theta, rope_scaling), so the two need a table each.
  bool local_rope = false;

  // gpt-oss: a learned attention-sink logit per head, biases on the router and the experts, and
  // every other layer attending to a sliding window of `sliding_window` tokens (layer_types);
  // Gemma 2 / Gemma 3 windowed layers likewise (attention_layers.hpp groups them).
  bool attention_sinks = false;
  bool moe_bias = false;           // router and expert biases (gpt-oss)
  int sliding_window = 0;          // tokens; 0: no sliding-window layers
  std::vector<int> sliding_layers; // decoder layers (0-based) attending to the window only

  // Llama 4: the RoPE layers (no_rope_layers[i] == 1) attend within their chunk of
  // `attention_chunk` tokens (chunked local attention); the NoPE layers attend to everything.
  int attention_chunk = 0;         // attention_chunk_size; 0: no chunked layers
  std::vector<int> chunked_layers; // decoder layers (0-based) with chunked local attention
  VisionTower vision;              // Llama4ForConditionalGeneration's vision tower and projector

  bool operator==(const ModelConfig&) const = default;

  bool is_moe() const { return experts > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  bool has_qk_norm() const;        // Qwen3 normalises q and k per head
  bool is_deepseek() const { return architecture == Architecture::deepseek_v2 || architecture == Architecture::deepseek_v3; }
  // Whether decoder layer `layer` (0-based) has routed experts rather than a dense MLP.
  bool is_moe_layer(int layer) const;
};

}  // namespace headroom::model
