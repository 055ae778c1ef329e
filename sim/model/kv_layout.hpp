#pragma once
// KV-cache bytes per token as each engine lays out its pool (docs/serving-memory-model.md §1.2 vLLM
// page_size_bytes, §2.2 SGLang cell_size, §3 LightLLM cell), for one tensor-parallel rank.
#include <string_view>

#include "sim/model/model_config.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::model {

enum class Engine { vllm, sglang, lightllm };

std::string_view engine_name(Engine engine);
Engine parse_engine(std::string_view text, std::string_view what);  // "vllm", "sglang", "lightllm"

// KV-cache element type. `model` follows the model's dtype (the engines' "auto"); fp8 is one byte
// (e4m3 or e5m2); fp8_ds_mla is vLLM's DeepSeek MLA layout of 656 B per token and layer.
enum class KvCacheDtype { model, bf16, fp16, fp8, fp8_ds_mla };

std::string_view kv_cache_dtype_name(KvCacheDtype dtype);
// Accepts auto, bf16/bfloat16, fp16/float16/half, fp8/fp8_e4m3/fp8_e5m2, fp8_ds_mla.
KvCacheDtype parse_kv_cache_dtype(std::string_view text, std::string_view what);

// What an engine's KV pool accepts, chosen by the engine layer (sim/engine EngineTraits kv_pool)
// and passed down, so that this layer needs no engine.
struct KvPoolRules {
  std::string_view engine;  // the engine's name, for messages
  bool fp8_ds_mla = false;  // vLLM's 656 B/token DeepSeek MLA layout
};

struct KvLayout {
  int layers = 0;            // decoder layers holding KV on this rank's stage (MTP modules excluded)
  bool mla = false;          // one latent "head" of kv_lora_rank + qk_rope_head_dim per token
  int kv_heads = 0;          // per rank: max(1, kv_heads / tp); 1 for MLA
  int head_dim = 0;          // elements per K (and per V) head; MLA: the latent width (576 for DeepSeek-V3)
  Bytes element_bytes = 0;   // 0 for fp8_ds_mla, whose layout is given in bytes
  Bytes bytes_per_token_per_layer = 0;
  Bytes bytes_per_token = 0; // all layers on this rank
};

// Throws InputError for a tp that does not fit the model and for fp8_ds_mla where the pool has no
// such layout or the model no MLA.
KvLayout kv_layout(const ModelConfig& config, const KvPoolRules& pool, KvCacheDtype dtype, int tp = 1);
// One rank of a deployment with pipeline, expert or data parallelism: the KV heads of its attention
// TP group, the decoder layers of its pipeline stage.
KvLayout kv_layout(const ModelConfig& config, const KvPoolRules& pool, KvCacheDtype dtype, const RankPlacement& placement);
// The same for an engine named by id: the model tests' spelling; sim/ passes the engine's rules.
KvLayout kv_layout(const ModelConfig& config, Engine engine, KvCacheDtype dtype, int tp = 1);

// vLLM page_size_bytes of one layer's block: block_size × bytes_per_token_per_layer, i.e.
// 2 × block × Hkv × D × dtype (MHA/GQA), block × 576 × dtype (MLA), block × 656 (fp8_ds_mla).
Bytes vllm_page_size_bytes(const KvLayout& layout, int block_size);

}  // namespace headroom::model
