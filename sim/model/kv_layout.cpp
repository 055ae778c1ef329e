#include "sim/model/kv_layout.hpp"

#include <fmt/format.h>

#include "sim/core/enum_names.hpp"
#include "sim/core/error.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::model {

namespace {

constexpr std::array<EnumName<Engine>, 3> kEngineNames{{
    {Engine::vllm, "vllm"},
    {Engine::sglang, "sglang"},
    {Engine::lightllm, "lightllm"},
}};

// The engines' --kv-cache-dtype values; fp8_e4m3 and fp8_e5m2 are listed since users pass them.
constexpr std::array<EnumName<KvCacheDtype>, 10> kKvCacheDtypeNames{{
    {KvCacheDtype::model, "auto"},
    {KvCacheDtype::bf16, "bf16"},
    {KvCacheDtype::bf16, "bfloat16", Spelling::alias},
    {KvCacheDtype::fp16, "fp16"},
    {KvCacheDtype::fp16, "float16", Spelling::alias},
    {KvCacheDtype::fp16, "half", Spelling::alias},
    {KvCacheDtype::fp8, "fp8"},
    {KvCacheDtype::fp8, "fp8_e4m3"},
    {KvCacheDtype::fp8, "fp8_e5m2"},
    {KvCacheDtype::fp8_ds_mla, "fp8_ds_mla"},
}};

}  // namespace

std::string_view engine_name(Engine engine) { return enum_name(kEngineNames, engine); }

Engine parse_engine(std::string_view text, std::string_view what) { return parse_enum(kEngineNames, text, what); }

std::string_view kv_cache_dtype_name(KvCacheDtype dtype) { return enum_name(kKvCacheDtypeNames, dtype); }

KvCacheDtype parse_kv_cache_dtype(std::string_view text, std::string_view what) {
  return parse_enum(kKvCacheDtypeNames, text, what);
}

namespace {

// vllm/v1/kv_cache_interface.py MLAAttentionSpec.page_size_bytes: block_size × 656 for fp8_ds_mla
// (512 fp8 latent values, 4 float32 scales, 64 bf16 rope values; docs/serving-memory-model.md §1.2).
constexpr Bytes kFp8DsMlaBytesPerToken = 656;

Bytes element_bytes(const ModelConfig& config, KvCacheDtype dtype) {
  switch (dtype) {
    case KvCacheDtype::model: return dtype_bytes(config.dtype);
    case KvCacheDtype::bf16:
    case KvCacheDtype::fp16: return 2;
    case KvCacheDtype::fp8: return 1;
    case KvCacheDtype::fp8_ds_mla: return 0;
  }
  return 0;
}

}  // namespace

KvLayout kv_layout(const ModelConfig& config, Engine engine, KvCacheDtype dtype, int tp) {
  return kv_layout(config, KvPoolRules{engine_name(engine), engine == Engine::vllm}, dtype, tp);
}

KvLayout kv_layout(const ModelConfig& config, const KvPoolRules& pool, KvCacheDtype dtype, int tp) {
  if (tp < 1) throw InputError(fmt::format("tensor parallel size must be at least 1, got {}", tp));
  return kv_layout(config, pool, dtype, RankPlacement::tensor_parallel(tp));
}

KvLayout kv_layout(const ModelConfig& config, const KvPoolRules& pool, KvCacheDtype dtype, const RankPlacement& placement) {
  TensorParallelShard shard = rank_shard(config, placement);
  KvLayout layout;
  // vLLM, SGLang: a pipeline stage allocates KV for its own layers only (KV cache specs of the
  // stage's attention layers).
  layout.layers = shard.stage_layers();
  layout.mla = config.is_mla();
  layout.element_bytes = element_bytes(config, dtype);
  if (dtype == KvCacheDtype::fp8_ds_mla && (!pool.fp8_ds_mla || !layout.mla))
    throw InputError(fmt::format("kv cache dtype fp8_ds_mla is vLLM's layout for MLA models; model '{}' on {} has none",
                                 config.name, pool.engine));
  if (layout.mla) {
    // MLA caches the compressed latent and the rope key once per token, replicated on every rank:
    // vLLM MLAAttentionSpec, SGLang MLATokenToKVPool, LightLLM's DeepSeek-2 memory manager.
    layout.kv_heads = 1;
    layout.head_dim = config.kv_lora_rank + config.qk_rope_head_dim;
    layout.bytes_per_token_per_layer = dtype == KvCacheDtype::fp8_ds_mla
                                           ? kFp8DsMlaBytesPerToken
                                           : static_cast<Bytes>(layout.head_dim) * layout.element_bytes;
  } else {
    // K and V, each Hkv (per rank) × D: vLLM FullAttentionSpec, SGLang MHATokenToKVPool,
    // LightLLM MemoryManager all store 2 × Hkv × D elements per token and layer.
    layout.kv_heads = shard.kv_heads;
    layout.head_dim = config.head_dim;
    layout.bytes_per_token_per_layer =
        2 * static_cast<Bytes>(layout.kv_heads) * static_cast<Bytes>(layout.head_dim) * layout.element_bytes;
  }
  layout.bytes_per_token = layout.bytes_per_token_per_layer * static_cast<Bytes>(layout.layers);
  return layout;
}

Bytes vllm_page_size_bytes(const KvLayout& layout, int block_size) {
  if (block_size < 1) throw InputError(fmt::format("block size must be at least 1, got {}", block_size));
  return static_cast<Bytes>(block_size) * layout.bytes_per_token_per_layer;
}

}  // namespace headroom::model
