#include "sim/model/model_config.hpp"

#include <algorithm>

namespace headroom::model {

std::string_view architecture_name(Architecture architecture) {
  switch (architecture) {
    case Architecture::llama: return "llama";
    case Architecture::qwen2: return "qwen2";
    case Architecture::qwen3: return "qwen3";
    case Architecture::qwen3_moe: return "qwen3_moe";
    case Architecture::mixtral: return "mixtral";
    case Architecture::deepseek_v3: return "deepseek_v3";
    case Architecture::mistral: return "mistral";
    case Architecture::deepseek_v2: return "deepseek_v2";
    case Architecture::gpt_oss: return "gpt_oss";
    case Architecture::gemma2: return "gemma2";
    case Architecture::gemma3_text: return "gemma3_text";
    case Architecture::llama4: return "llama4";
  }
  return "?";
}

std::string_view rope_scaling_name(RopeScaling scaling) {
  switch (scaling) {
    case RopeScaling::none: return "default";
    case RopeScaling::linear: return "linear";
    case RopeScaling::dynamic: return "dynamic";
    case RopeScaling::llama3: return "llama3";
    case RopeScaling::yarn: return "yarn";
  }
  return "?";
}

const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> names = {"llama",       "qwen2",   "qwen3",       "qwen3_moe", "mixtral",
                                                 "deepseek_v3", "mistral", "deepseek_v2", "gpt_oss", "gemma2",
                                                 "gemma3_text", "llama4"};
  return names;
}

std::string_view quantization_name(WeightQuantization::Method method) {
  using M = WeightQuantization::Method;
  switch (method) {
    case M::none: return "none";
    case M::fp8_block: return "fp8 block";
    case M::fp8_tensor: return "fp8 per-tensor";
    case M::fp8_channel: return "fp8 per-channel";
    case M::gptq: return "gptq";
    case M::awq: return "awq";
    case M::mxfp4: return "mxfp4";
    case M::nvfp4: return "nvfp4";
    case M::wna16: return "compressed-tensors wNa16";
  }
  return "?";
}

bool ModelConfig::has_qk_norm() const {
  // Qwen3 and Gemma 3 normalise q and k per head (Qwen3Attention, Gemma3Attention q_norm / k_norm).
  return architecture == Architecture::qwen3 || architecture == Architecture::qwen3_moe ||
         architecture == Architecture::gemma3_text;
}

bool ModelConfig::is_moe_layer(int layer) const {
  if (!is_moe()) return false;
  switch (architecture) {
    case Architecture::deepseek_v2:
    case Architecture::deepseek_v3:
      // transformers modeling_deepseek: MoE when layer >= first_k_dense_replace and layer % moe_layer_freq == 0.
      return layer >= first_k_dense && layer % moe_layer_step == 0;
    case Architecture::qwen3_moe:
      // transformers Qwen3MoeDecoderLayer: not in mlp_only_layers and (layer + 1) % decoder_sparse_step == 0.
      return std::find(dense_layers.begin(), dense_layers.end(), layer) == dense_layers.end() &&
             (layer + 1) % moe_layer_step == 0;
    case Architecture::llama4:
      // vllm models/llama4.py Llama4DecoderLayer: MoE when (layer + 1) % interleave_moe_layer_step == 0.
      return (layer + 1) % moe_layer_step == 0;
    default:
      return true;  // Mixtral, gpt-oss: every layer
  }
}

}  // namespace headroom::model
