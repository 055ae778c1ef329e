// KV bytes per token per engine layout (docs/serving-memory-model.md §1.2, §2.2, §3).
#include <catch2/catch.hpp>

#include "sim/core/error.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/kv_layout.hpp"

using namespace headroom;
using namespace headroom::model;

TEST_CASE("vLLM page size for Llama-3.1-8B, block 16, is 64 KiB per layer") {
  KvLayout kv = kv_layout(catalogue_model("Llama-3.1-8B"), Engine::vllm, KvCacheDtype::model);
  CHECK(vllm_page_size_bytes(kv, 16) == 64 * KiB);  // 2 × 16 × 8 × 128 × 2
  CHECK(vllm_page_size_bytes(kv, 16) * 32 == 2 * MiB);  // one block across all layers
  CHECK(kv.bytes_per_token == 128 * KiB);
  CHECK_THROWS_WITH(vllm_page_size_bytes(kv, 0), "block size must be at least 1, got 0");
}

TEST_CASE("fp8 KV halves the bytes and fp8_ds_mla is 656 B per token and layer") {
  ModelConfig llama = catalogue_model("Llama-3.1-8B");
  CHECK(kv_layout(llama, Engine::sglang, KvCacheDtype::fp8).bytes_per_token == 64 * KiB);
  CHECK(kv_layout(llama, Engine::lightllm, KvCacheDtype::fp16).bytes_per_token == 128 * KiB);
  ModelConfig ds = catalogue_model("DeepSeek-V3");
  KvLayout mla = kv_layout(ds, Engine::vllm, KvCacheDtype::model);
  CHECK(mla.mla);
  CHECK(mla.head_dim == 576);
  CHECK(mla.bytes_per_token == 70'272);  // 576 × 61 × 2
  CHECK(vllm_page_size_bytes(mla, 64) == 64 * 1152);  // FlashMLA block 64
  CHECK(kv_layout(ds, Engine::sglang, KvCacheDtype::fp8).bytes_per_token == 576 * 61);
  KvLayout ds_mla = kv_layout(ds, Engine::vllm, KvCacheDtype::fp8_ds_mla);
  CHECK(ds_mla.bytes_per_token == 656 * 61);
  CHECK(vllm_page_size_bytes(ds_mla, 64) == 64 * 656);
  CHECK_THROWS_WITH(kv_layout(ds, Engine::sglang, KvCacheDtype::fp8_ds_mla),
                    "kv cache dtype fp8_ds_mla is vLLM's layout for MLA models; model 'DeepSeek-V3' on sglang "
                    "has none");
  CHECK_THROWS_AS(kv_layout(llama, Engine::vllm, KvCacheDtype::fp8_ds_mla), InputError);
}

TEST_CASE("TP divides KV heads per rank, replicating them past the KV head count") {
  ModelConfig c = catalogue_model("Llama-3.1-70B");
  for (Engine e : {Engine::vllm, Engine::sglang, Engine::lightllm}) {
    INFO(engine_name(e));
    CHECK(kv_layout(c, e, KvCacheDtype::model, 2).bytes_per_token == 160 * KiB);
    KvLayout tp8 = kv_layout(c, e, KvCacheDtype::model, 8);
    CHECK(tp8.kv_heads == 1);
    CHECK(tp8.bytes_per_token == 40 * KiB);
    // TP 16: 8 KV heads on 16 ranks, one (replicated) head per rank: no further saving.
    CHECK(kv_layout(c, e, KvCacheDtype::model, 16).bytes_per_token == 40 * KiB);
  }
  // The MLA latent is replicated on every rank.
  CHECK(kv_layout(catalogue_model("DeepSeek-R1"), Engine::vllm, KvCacheDtype::model, 8).bytes_per_token == 70'272);
}

TEST_CASE("engine and KV dtype names parse, with errors naming the field") {
  CHECK(parse_engine("sglang", "engine") == Engine::sglang);
  CHECK(parse_kv_cache_dtype("fp8_e5m2", "kv_cache_dtype") == KvCacheDtype::fp8);
  CHECK(parse_kv_cache_dtype("auto", "kv_cache_dtype") == KvCacheDtype::model);
  CHECK_THROWS_WITH(parse_engine("trtllm", "scenario.yaml:3: engine"),
                    "scenario.yaml:3: engine: expected one of vllm, sglang, lightllm, got 'trtllm'");
  CHECK_THROWS_WITH(parse_kv_cache_dtype("int4", "kv_cache_dtype"),
                    "kv_cache_dtype: expected one of auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2, fp8_ds_mla, got "
                    "'int4'");
  CHECK(parse_dtype("bfloat16", "dtype") == DType::bf16);
  CHECK(dtype_bytes(DType::fp8) == 1);
  CHECK_THROWS_WITH(parse_dtype("int8", "dtype"), "dtype: expected one of bf16, fp16, fp32, fp8, got 'int8'");
}

TEST_CASE("every written engine and dtype name reads back as itself and program-only dtypes are not read") {
  for (Engine e : {Engine::vllm, Engine::sglang, Engine::lightllm}) CHECK(parse_engine(engine_name(e), "x") == e);
  for (KvCacheDtype d : {KvCacheDtype::model, KvCacheDtype::bf16, KvCacheDtype::fp16, KvCacheDtype::fp8,
                         KvCacheDtype::fp8_ds_mla})
    CHECK(parse_kv_cache_dtype(kv_cache_dtype_name(d), "x") == d);
  for (DType d : {DType::bf16, DType::fp16, DType::fp32, DType::fp8}) CHECK(parse_dtype(dtype_name(d), "x") == d);
  for (DType d : {DType::int32, DType::uint8, DType::int64}) CHECK_THROWS_AS(parse_dtype(dtype_name(d), "x"), InputError);
  CHECK(dtype_name(DType::int64) == "int64");
}
