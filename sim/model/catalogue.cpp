#include "sim/model/catalogue.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/error.hpp"
#include "sim/core/did_you_mean.hpp"

namespace headroom::model {

namespace {

// Figures from each model's config.json (docs/serving-memory-model.md §7; tests/model/configs holds
// the same files and checks they load to these).
ModelConfig llama_3_1(std::string name, int layers, int hidden, int intermediate, int heads) {
  ModelConfig c;
  c.name = std::move(name);
  c.architecture = Architecture::llama;
  c.layers = layers;
  c.hidden = hidden;
  c.intermediate = intermediate;
  c.heads = heads;
  c.kv_heads = 8;
  c.head_dim = 128;
  c.vocab = 128256;
  c.max_position = 131072;
  c.rope_scaling = RopeScaling::llama3;  // factor 8 over the original 8,192 positions
  c.rope_factor = 8;
  return c;
}

ModelConfig qwen2_5_7b(std::string name, std::int64_t max_position) {
  ModelConfig c;
  c.name = std::move(name);
  c.architecture = Architecture::qwen2;
  c.layers = 28;
  c.hidden = 3584;
  c.intermediate = 18944;
  c.heads = 28;
  c.kv_heads = 4;
  c.head_dim = 128;
  c.vocab = 152064;
  c.max_position = max_position;  // base 131,072; Instruct 32,768 (§7)
  c.qkv_bias = true;              // Qwen2Attention: q/k/v projections have a bias, o_proj none
  return c;
}

ModelConfig qwen3_30b_a3b() {
  ModelConfig c;
  c.name = "Qwen3-30B-A3B";
  c.architecture = Architecture::qwen3_moe;
  c.layers = 48;
  c.hidden = 2048;
  c.intermediate = 6144;  // unused: no mlp_only_layers
  c.heads = 32;
  c.kv_heads = 4;
  c.head_dim = 128;       // explicit in config.json (Hq × D = 4096 ≠ H)
  c.vocab = 151936;
  c.max_position = 40960;
  c.experts = 128;
  c.experts_per_token = 8;
  c.moe_intermediate = 768;
  return c;
}

ModelConfig deepseek_v3(std::string name) {
  ModelConfig c;
  c.name = std::move(name);
  c.architecture = Architecture::deepseek_v3;
  c.layers = 61;
  c.hidden = 7168;
  c.intermediate = 18432;
  c.heads = 128;
  c.kv_heads = 128;
  c.head_dim = 192;       // qk_nope_head_dim + qk_rope_head_dim
  c.vocab = 129280;
  c.max_position = 163840;
  c.experts = 256;
  c.experts_per_token = 8;
  c.moe_intermediate = 2048;
  c.shared_experts = 1;
  c.first_k_dense = 3;
  c.q_lora_rank = 1536;
  c.kv_lora_rank = 512;
  c.qk_nope_head_dim = 128;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 128;
  // The published checkpoint is block-quantized FP8 (quantization_config: fp8, weight_block_size
  // [128, 128]); torch_dtype bfloat16 covers embeddings, norms and routers.
  c.quantization = {WeightQuantization::Method::fp8_block, 128, 128};
  c.mtp_layers = 1;       // num_nextn_predict_layers
  c.rope_scaling = RopeScaling::yarn;  // factor 40 over 4,096 positions
  c.rope_factor = 40;
  c.rope_original_max_position = 4096;
  return c;
}

ModelConfig mixtral_8x7b() {
  ModelConfig c;
  c.name = "Mixtral-8x7B";
  c.architecture = Architecture::mixtral;
  c.layers = 32;
  c.hidden = 4096;
  c.intermediate = 14336;
  c.heads = 32;
  c.kv_heads = 8;
  c.head_dim = 128;
  c.vocab = 32000;
  c.max_position = 32768;
  c.experts = 8;
  c.experts_per_token = 2;
  c.moe_intermediate = 14336;  // Mixtral's intermediate_size is the width of each expert
  return c;
}

// Mistral-7B-v0.3: Llama's shapes with a 32,768-token vocabulary and no sliding window.
ModelConfig mistral_7b_v0_3() {
  ModelConfig c = llama_3_1("Mistral-7B-v0.3", 32, 4096, 14336, 32);
  c.architecture = Architecture::mistral;
  c.vocab = 32768;
  c.max_position = 32768;
  c.rope_scaling = RopeScaling::none;
  c.rope_factor = 1;
  return c;
}

// DeepSeek-V2-Lite: MLA without a query latent (q_lora_rank null), 64 routed experts and 2 shared.
ModelConfig deepseek_v2_lite() {
  ModelConfig c;
  c.name = "DeepSeek-V2-Lite";
  c.architecture = Architecture::deepseek_v2;
  c.layers = 27;
  c.hidden = 2048;
  c.intermediate = 10944;
  c.heads = 16;
  c.kv_heads = 16;
  c.head_dim = 192;
  c.vocab = 102400;
  c.max_position = 163840;
  c.experts = 64;
  c.experts_per_token = 6;
  c.moe_intermediate = 1408;
  c.shared_experts = 2;
  c.first_k_dense = 1;
  c.kv_lora_rank = 512;
  c.qk_nope_head_dim = 128;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 128;
  c.rope_scaling = RopeScaling::yarn;  // factor 40 over 4,096 positions
  c.rope_factor = 40;
  c.rope_original_max_position = 4096;
  return c;
}

// gpt-oss-20b: MXFP4 experts, attention sinks, sliding-window (128) and full layers alternating.
ModelConfig gpt_oss_20b() {
  ModelConfig c;
  c.name = "gpt-oss-20b";
  c.architecture = Architecture::gpt_oss;
  c.layers = 24;
  c.hidden = 2880;
  c.intermediate = 2880;
  c.heads = 64;
  c.kv_heads = 8;
  c.head_dim = 64;
  c.vocab = 201088;
  c.max_position = 131072;
  c.qkv_bias = c.o_proj_bias = true;
  c.experts = 32;
  c.experts_per_token = 4;
  c.moe_intermediate = 2880;
  c.quantization.method = WeightQuantization::Method::mxfp4;
  c.quantization.group_size = 32;
  c.attention_sinks = true;
  c.moe_bias = true;
  c.sliding_window = 128;
  for (int l = 0; l < c.layers; l += 2) c.sliding_layers.push_back(l);
  c.rope_scaling = RopeScaling::yarn;  // factor 32 over 4,096 positions
  c.rope_factor = 32;
  c.rope_original_max_position = 4096;
  return c;
}

// Gemma-2-9B-it (google/gemma-2-9b-it config.json): 42 layers, even ones attending to a window of
// 4,096 tokens, head_dim 256, the embedding tied to the LM head.
ModelConfig gemma_2_9b() {
  ModelConfig c;
  c.name = "gemma-2-9b-it";
  c.architecture = Architecture::gemma2;
  c.layers = 42;
  c.hidden = 3584;
  c.intermediate = 14336;
  c.heads = 16;
  c.kv_heads = 8;
  c.head_dim = 256;
  c.vocab = 256000;
  c.max_position = 8192;
  c.tie_word_embeddings = true;
  c.sliding_window = 4096;
  for (int l = 0; l < c.layers; l += 2) c.sliding_layers.push_back(l);
  return c;
}

// Gemma-3-1B-it (google/gemma-3-1b-it config.json, model_type gemma3_text): 26 layers, five of
// every six attending to a window of 512 tokens (sliding_window_pattern 6), one KV head of 256.
ModelConfig gemma_3_1b() {
  ModelConfig c;
  c.name = "gemma-3-1b-it";
  c.architecture = Architecture::gemma3_text;
  c.layers = 26;
  c.hidden = 1152;
  c.intermediate = 6912;
  c.heads = 4;
  c.kv_heads = 1;
  c.head_dim = 256;
  c.vocab = 262144;
  c.max_position = 32768;
  c.tie_word_embeddings = true;
  c.sliding_window = 512;
  for (int l = 0; l < c.layers; ++l)
    if ((l + 1) % 6 != 0) c.sliding_layers.push_back(l);
  c.local_rope = true;  // rope_local_base_freq 10,000 against rope_theta 1,000,000
  return c;
}

// Llama 4 (meta-llama/Llama-4-Scout-17B-16E-Instruct and Llama-4-Maverick-17B-128E-Instruct
// config.json, Llama4ForConditionalGeneration): text_config 48 layers of 5120, 40 query and 8 KV
// heads of 128, experts of 8192 plus a shared one, dense layers of 16384 (intermediate_size_mlp),
// attention_chunk_size 8192 with every fourth layer NoPE (no_rope_layers [1,1,1,0,...]: full
// attention); vision_config 34 layers of 1408 (16 heads, MLP 5632), 336-pixel images in 14-pixel
// patches, projector 4096 -> 4096, vision_output_dim 4096, no projector bias.
ModelConfig llama_4(std::string name, int experts, int moe_layer_step, std::int64_t max_position) {
  ModelConfig c;
  c.name = std::move(name);
  c.architecture = Architecture::llama4;
  c.layers = 48;
  c.hidden = 5120;
  c.intermediate = 16384;
  c.heads = 40;
  c.kv_heads = 8;
  c.head_dim = 128;
  c.vocab = 202048;
  c.max_position = max_position;
  c.experts = experts;
  c.experts_per_token = 1;
  c.moe_intermediate = 8192;
  c.shared_experts = 1;
  c.moe_layer_step = moe_layer_step;
  c.attention_chunk = 8192;
  for (int l = 0; l < c.layers; ++l)
    if ((l + 1) % 4 != 0) c.chunked_layers.push_back(l);
  c.vision = VisionTower{.layers = 34, .hidden = 1408, .intermediate = 5632, .heads = 16, .image_size = 336,
                         .patch_size = 14, .channels = 3, .projector_input = 4096, .projector_output = 4096,
                         .output = 4096, .projector_bias = false};
  return c;
}

struct Entry {
  ModelConfig config;
  std::vector<std::string> aliases;  // Hugging Face repository ids with the same config
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> all = {
      {llama_3_1("Llama-3.1-8B", 32, 4096, 14336, 32),
       {"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B",
        "meta-llama/Meta-Llama-3.1-8B-Instruct", "Llama-3.1-8B-Instruct"}},
      {llama_3_1("Llama-3.1-70B", 80, 8192, 28672, 64),
       {"meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B",
        "meta-llama/Meta-Llama-3.1-70B-Instruct", "Llama-3.1-70B-Instruct"}},
      {qwen2_5_7b("Qwen2.5-7B", 131072), {"Qwen/Qwen2.5-7B"}},
      {qwen2_5_7b("Qwen2.5-7B-Instruct", 32768), {"Qwen/Qwen2.5-7B-Instruct"}},
      {qwen3_30b_a3b(), {"Qwen/Qwen3-30B-A3B"}},
      {deepseek_v3("DeepSeek-V3"), {"deepseek-ai/DeepSeek-V3"}},
      {deepseek_v3("DeepSeek-R1"), {"deepseek-ai/DeepSeek-R1"}},
      {mixtral_8x7b(),
       {"mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1", "Mixtral-8x7B-Instruct"}},
      {mistral_7b_v0_3(), {"mistralai/Mistral-7B-v0.3", "mistralai/Mistral-7B-Instruct-v0.3"}},
      {deepseek_v2_lite(), {"deepseek-ai/DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V2-Lite-Chat"}},
      {gpt_oss_20b(), {"openai/gpt-oss-20b"}},
      {gemma_2_9b(), {"google/gemma-2-9b-it"}},
      {gemma_3_1b(), {"google/gemma-3-1b-it"}},
      // Scout: every layer MoE over 16 experts, max_position_embeddings 10,485,760; Maverick: every
      // other layer (interleave_moe_layer_step 2) over 128 experts, 1,048,576.
      {llama_4("Llama-4-Scout-17B-16E-Instruct", 16, 1, 10485760),
       {"meta-llama/Llama-4-Scout-17B-16E-Instruct"}},
      {llama_4("Llama-4-Maverick-17B-128E-Instruct", 128, 2, 1048576),
       {"meta-llama/Llama-4-Maverick-17B-128E-Instruct"}},
  };
  return all;
}

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

const std::vector<std::string>& catalogue_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& e : entries()) n.push_back(e.config.name);
    return n;
  }();
  return names;
}

ModelConfig catalogue_model(std::string_view name) {
  for (const auto& e : entries()) {
    if (same_ignoring_case(name, e.config.name)) return e.config;
    for (const auto& alias : e.aliases)
      if (same_ignoring_case(name, alias)) return e.config;
  }
  throw InputError(fmt::format("unknown model '{}'{} (built-in: {}; or give a config.json)", name,
                               did_you_mean_suffix(name, catalogue_names()), fmt::join(catalogue_names(), ", ")));
}

}  // namespace headroom::model
