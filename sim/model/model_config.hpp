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
enum class Architecture { llama, qwen2, qwen3, qwen3_moe, mixtral, deepseek_v3 };

std::string_view architecture_name(Architecture architecture);  // the model_type string
const std::vector<std::string>& supported_architectures();       // in the order above

// How weights were quantized in the checkpoint (HF `quantization_config`).
struct WeightQuantization {
  enum class Method { none, fp8_block };
  Method method = Method::none;
  int block_n = 0;  // weight_block_size[0]: output rows per scale
  int block_k = 0;  // weight_block_size[1]: input columns per scale
  bool operator==(const WeightQuantization&) const = default;
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

  bool operator==(const ModelConfig&) const = default;

  bool is_moe() const { return experts > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  bool has_qk_norm() const;        // Qwen3 normalises q and k per head
  // Whether decoder layer `layer` (0-based) has routed experts rather than a dense MLP.
  bool is_moe_layer(int layer) const;
};

}  // namespace headroom::model
