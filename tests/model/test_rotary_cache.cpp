// The rotary tables vLLM and SGLang build while loading a model (model/rotary_cache.hpp), a worked
// figure per rope type: rows × width × dtype bytes from get_rope's rule for that type.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/model/catalogue.hpp"
#include "sim/model/rotary_cache.hpp"

using namespace headroom;
using namespace headroom::model;

namespace {

constexpr RotaryRules kVllm{};                  // the model's dtype
constexpr RotaryRules kSglang{.float32 = true};  // float32 on CUDA (PR #3134)

std::vector<int> layers_upto(int n) {
  std::vector<int> l;
  for (int i = 0; i < n; ++i) l.push_back(i);
  return l;
}

}  // namespace

TEST_CASE("rotary tables: default and llama3 are built for max_position_embeddings, one for every layer") {
  // Qwen2.5-7B (no rope_scaling): RotaryEmbedding [131072, 128]; bf16 32 MiB in vLLM, float32 64 MiB in SGLang.
  const std::vector<RotaryTable> qwen = rotary_tables(catalogue_model("Qwen2.5-7B"), kVllm);
  REQUIRE(qwen.size() == 1);
  CHECK(qwen[0].name == "model.layers.0.self_attn.rotary_emb.cos_sin_cache");
  CHECK(qwen[0].layers == layers_upto(28));
  CHECK(qwen[0].positions == 131072);
  CHECK(qwen[0].width == 128);
  CHECK(qwen[0].bytes() == 33'554'432);
  CHECK(rotary_tables(catalogue_model("Qwen2.5-7B"), kSglang)[0].bytes() == 67'108'864);
  // Llama-3.1-8B, rope_type llama3 factor 8: Llama3RotaryEmbedding rescales frequencies, not
  // positions: [131072, 128] bf16, 33,554,432 B (the 32 MiB of vLLM 0.5.4's loaded size).
  const std::vector<RotaryTable> llama = rotary_tables(catalogue_model("Llama-3.1-8B"), kVllm);
  REQUIRE(llama.size() == 1);
  CHECK(llama[0].positions == 131072);
  CHECK(llama[0].bytes() == 33'554'432);
  CHECK_FALSE(llama[0].before_attention);
  // Mistral-7B-v0.3: [32768, 128] bf16, 8 MiB; an fp16 model keeps fp16 (the same bytes).
  ModelConfig mistral = catalogue_model("Mistral-7B-v0.3");
  CHECK(rotary_tables(mistral, kVllm)[0].bytes() == 8'388'608);
  mistral.dtype = DType::fp16;
  CHECK(rotary_tables(mistral, kVllm)[0].dtype == DType::fp16);
}

TEST_CASE("rotary tables: linear, dynamic and yarn scale the positions, ceil of a fractional end") {
  ModelConfig c = catalogue_model("Qwen2.5-7B-Instruct");  // 32,768 positions, head_dim 128, bf16
  // LinearScalingRotaryEmbedding: arange(max_position × factor): 32,768 × 4 = 131,072 rows.
  c.rope_scaling = RopeScaling::linear;
  c.rope_factor = 4;
  CHECK(rotary_tables(c, kVllm)[0].positions == 131072);
  // torch.arange(32768 × 2.5 = 81920.0) counts 81,920; 4097 × 2.5 = 10242.5 counts 10,243.
  c.rope_factor = 2.5;
  CHECK(rotary_tables(c, kVllm)[0].positions == 81920);
  CHECK(get_rope_positions(RopeScaling::linear, 2.5, 4097, 0) == 10243);
  // DynamicNTKScalingRotaryEmbedding: the same max_position × factor.
  c.rope_scaling = RopeScaling::dynamic;
  c.rope_factor = 2;
  CHECK(rotary_tables(c, kVllm)[0].bytes() == Bytes{65536} * 128 * 2);
  // YaRNScalingRotaryEmbedding (Qwen2.5's documented yarn: factor 4 over 32,768):
  // original_max_position × factor = 131,072 rows whatever max_position_embeddings says.
  c.rope_scaling = RopeScaling::yarn;
  c.rope_factor = 4;
  c.rope_original_max_position = 32768;
  CHECK(rotary_tables(c, kVllm)[0].positions == 131072);
  CHECK(rotary_tables(c, kVllm)[0].bytes() == 33'554'432);
}

TEST_CASE("rotary tables: MLA rotates qk_rope_head_dim with deepseek_yarn, gpt-oss asks for float32") {
  // DeepSeek-V3: DeepseekScalingRotaryEmbedding over qk_rope_head_dim 64, 4,096 × 40 = 163,840 rows:
  // bf16 20 MiB in vLLM, float32 40 MiB in SGLang.
  const std::vector<RotaryTable> v3 = rotary_tables(catalogue_model("DeepSeek-V3"), kVllm);
  REQUIRE(v3.size() == 1);
  CHECK(v3[0].positions == 163840);
  CHECK(v3[0].width == 64);
  CHECK(v3[0].bytes() == 20'971'520);
  CHECK(rotary_tables(catalogue_model("DeepSeek-V3"), kSglang)[0].bytes() == 41'943'040);
  CHECK(rotary_tables(catalogue_model("DeepSeek-V2-Lite"), kVllm)[0].bytes() == 20'971'520);
  // gpt-oss-20b: get_rope(dtype=torch.float32) with yarn 32 over 4,096: [131072, 64] float32,
  // 32 MiB in both engines, built first in OAIAttention (before its weights).
  const std::vector<RotaryTable> oss = rotary_tables(catalogue_model("gpt-oss-20b"), kVllm);
  REQUIRE(oss.size() == 1);
  CHECK(oss[0].dtype == DType::fp32);
  CHECK(oss[0].positions == 131072);
  CHECK(oss[0].bytes() == 33'554'432);
  CHECK(oss[0].before_attention);
  CHECK(rotary_tables(catalogue_model("gpt-oss-20b"), kSglang) == oss);
}

TEST_CASE("rotary tables: Gemma 2 shares one, Gemma 3 builds a local and a global one, Llama 4's NoPE layers none") {
  // Gemma-2-9B: every layer the same rope_theta: one [8192, 256] bf16 table, 4 MiB.
  const std::vector<RotaryTable> gemma2 = rotary_tables(catalogue_model("gemma-2-9b-it"), kVllm);
  REQUIRE(gemma2.size() == 1);
  CHECK(gemma2[0].layers == layers_upto(42));
  CHECK(gemma2[0].bytes() == 4'194'304);
  // Gemma-3-1B: sliding layers rope_local_base_freq 10,000, the others rope_theta 1,000,000: two
  // keys of _ROPE_DICT, two [32768, 256] bf16 tables of 16 MiB, the local one first (layer 0).
  const std::vector<RotaryTable> gemma3 = rotary_tables(catalogue_model("gemma-3-1b-it"), kVllm);
  REQUIRE(gemma3.size() == 2);
  CHECK(gemma3[0].layers.front() == 0);
  CHECK(gemma3[0].layers.size() == 22);
  CHECK(gemma3[1].layers == std::vector<int>{5, 11, 17, 23});
  CHECK(gemma3[1].name == "model.layers.5.self_attn.rotary_emb.cos_sin_cache");
  CHECK(gemma3[0].bytes() == 16'777'216);
  CHECK(gemma3[1].bytes() == 16'777'216);
  // Gemma 3 4B and larger scale the global rope linearly by 8 (rope_scaling linear): the global
  // table then has 8 × the rows; the local one keeps max_position_embeddings.
  ModelConfig scaled = catalogue_model("gemma-3-1b-it");
  scaled.rope_scaling = RopeScaling::linear;
  scaled.rope_factor = 8;
  const std::vector<RotaryTable> both = rotary_tables(scaled, kVllm);
  REQUIRE(both.size() == 2);
  CHECK(both[0].positions == 32768);
  CHECK(both[1].positions == 262144);
  // Llama-4-Scout: rotary_emb is None on the 12 NoPE layers; the 36 RoPE layers share one
  // [10485760, 128] table: 2.5 GiB in bf16 (vLLM), 5 GiB in float32 (SGLang).
  const std::vector<RotaryTable> scout = rotary_tables(catalogue_model("Llama-4-Scout-17B-16E-Instruct"), kVllm);
  REQUIRE(scout.size() == 1);
  CHECK(scout[0].layers.size() == 36);
  CHECK(scout[0].layers[3] == 4);
  CHECK(scout[0].bytes() == Bytes{5} << 29);
  CHECK(rotary_tables(catalogue_model("Llama-4-Scout-17B-16E-Instruct"), kSglang)[0].bytes() == Bytes{5} << 30);
}

TEST_CASE("rotary tables: where they fall in a rank's load order") {
  // Llama-3.1-8B at TP 1: after layer 0's o_proj.weight, the 4th tensor (embedding, qkv, o_proj).
  const ModelConfig llama = catalogue_model("Llama-3.1-8B");
  const WeightList w = model_weights(llama);
  REQUIRE(w.tensors[2].name == "model.layers.0.self_attn.o_proj.weight");
  CHECK(rotary_load_positions(w, rotary_tables(llama, kVllm)) == std::vector<std::ptrdiff_t>{3});
  // gpt-oss builds its table before layer 0's attention weights (qkv_proj.weight, the 2nd tensor).
  const ModelConfig oss = catalogue_model("gpt-oss-20b");
  const WeightList o = model_weights(oss);
  REQUIRE(o.tensors[1].name == "model.layers.0.self_attn.qkv_proj.weight");
  CHECK(rotary_load_positions(o, rotary_tables(oss, kVllm)) == std::vector<std::ptrdiff_t>{1});
  // Gemma-3-1B: the global table in layer 5, after its o_proj.
  const ModelConfig gemma3 = catalogue_model("gemma-3-1b-it");
  const WeightList g = model_weights(gemma3);
  const std::vector<std::ptrdiff_t> at = rotary_load_positions(g, rotary_tables(gemma3, kVllm));
  REQUIRE(at.size() == 2);
  CHECK(g.tensors[static_cast<std::size_t>(at[1]) - 1].name == "model.layers.5.self_attn.o_proj.weight");
  // Pipeline stage 2 of 2 (layers 16-31): the first of the table's layers there builds it.
  WeightOptions second;
  second.placement = RankPlacement{};
  second.placement->pp = 2;
  second.placement->pp_rank = 1;
  const WeightList late = model_weights(llama, second);
  const std::vector<std::ptrdiff_t> late_at = rotary_load_positions(late, rotary_tables(llama, kVllm));
  REQUIRE(late_at.size() == 1);
  REQUIRE(late_at[0] > 0);
  CHECK(late.tensors[static_cast<std::size_t>(late_at[0]) - 1].name == "model.layers.16.self_attn.o_proj.weight");
}
