// Weight tensors per tensor-parallel rank: splits, replication, vocabulary padding, MoE and MLA.
#include <catch2/catch.hpp>

#include <map>

#include "sim/core/error.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/tensor_parallel.hpp"
#include "sim/model/weights.hpp"

using namespace headroom;
using namespace headroom::model;
using Shape = std::vector<std::int64_t>;

namespace {

std::map<std::string, WeightTensor> by_name(const WeightList& w) {
  std::map<std::string, WeightTensor> m;
  for (const auto& t : w.tensors) m.emplace(t.name, t);
  return m;
}

WeightList weights_at(const std::string& model, int tp) {
  WeightOptions o;
  o.tp = tp;
  return model_weights(catalogue_model(model), o);
}

}  // namespace

TEST_CASE("Llama-3.1-8B load order and shapes at TP 1") {
  WeightList w = weights_at("Llama-3.1-8B", 1);
  REQUIRE(w.tensors.size() == 1 + 32 * 6 + 2);
  CHECK(w.tensors[0].name == "model.embed_tokens.weight");
  CHECK(w.tensors[0].shape == Shape{128256, 4096});
  CHECK(w.tensors[1].name == "model.layers.0.self_attn.qkv_proj.weight");
  CHECK(w.tensors[1].shape == Shape{(32 + 2 * 8) * 128, 4096});
  CHECK(w.tensors[2].name == "model.layers.0.self_attn.o_proj.weight");
  CHECK(w.tensors[3].name == "model.layers.0.mlp.gate_up_proj.weight");
  CHECK(w.tensors[3].shape == Shape{2 * 14336, 4096});
  CHECK(w.tensors[4].name == "model.layers.0.mlp.down_proj.weight");
  CHECK(w.tensors[4].shape == Shape{4096, 14336});
  CHECK(w.tensors[5].name == "model.layers.0.input_layernorm.weight");
  CHECK(w.tensors[6].name == "model.layers.0.post_attention_layernorm.weight");
  CHECK(w.tensors[w.tensors.size() - 2].name == "model.norm.weight");
  CHECK(w.tensors.back().name == "lm_head.weight");
  for (const auto& t : w.tensors) CHECK(t.dtype == DType::bf16);
  CHECK(w.bytes == 16'060'522'496);
}

TEST_CASE("Llama-3.1-70B at TP 8 has one KV head per rank, at TP 16 it is replicated") {
  auto tp8 = by_name(weights_at("Llama-3.1-70B", 8));
  // 64 / 8 = 8 query heads and 8 / 8 = 1 KV head per rank.
  CHECK(tp8.at("model.layers.0.self_attn.qkv_proj.weight").shape == Shape{(8 + 2 * 1) * 128, 8192});
  CHECK(tp8.at("model.layers.0.self_attn.o_proj.weight").shape == Shape{8192, 8 * 128});
  CHECK(tp8.at("model.layers.0.mlp.gate_up_proj.weight").shape == Shape{2 * 28672 / 8, 8192});
  CHECK(tp8.at("model.layers.0.mlp.down_proj.weight").shape == Shape{8192, 28672 / 8});
  CHECK(tp8.at("model.embed_tokens.weight").shape == Shape{128256 / 8, 8192});
  CHECK(tp8.at("model.layers.0.input_layernorm.weight").shape == Shape{8192});  // replicated

  auto tp16 = by_name(weights_at("Llama-3.1-70B", 16));
  // 4 query heads per rank; 8 KV heads on 16 ranks: each rank keeps one, shared by two ranks.
  CHECK(tp16.at("model.layers.0.self_attn.qkv_proj.weight").shape == Shape{(4 + 2 * 1) * 128, 8192});
  TensorParallelShard s = tensor_parallel_shard(catalogue_model("Llama-3.1-70B"), 16);
  CHECK(s.kv_heads == 1);
  CHECK(s.kv_head_replicas == 2);
}

TEST_CASE("vocabulary is padded to a multiple of 64 before the TP split") {
  ModelConfig c = catalogue_model("Llama-3.1-8B");
  c.vocab = 32001;  // pads to 32064
  WeightOptions o;
  o.tp = 2;
  auto w = by_name(model_weights(c, o));
  CHECK(w.at("model.embed_tokens.weight").shape == Shape{32064 / 2, 4096});
  CHECK(w.at("lm_head.weight").shape == Shape{32064 / 2, 4096});
  CHECK(tensor_parallel_shard(c, 1).vocab == 32064);
  // The published parameter count uses the real vocabulary.
  o.tp = 1;
  CHECK(model_weights(c, o).parameters - parameter_count(c) == 2 * 63 * 4096);
}

TEST_CASE("Qwen2.5-7B carries q/k/v biases split with their projections") {
  auto w = by_name(weights_at("Qwen2.5-7B", 4));
  CHECK(w.at("model.layers.0.self_attn.qkv_proj.bias").shape == Shape{(7 + 2 * 1) * 128});
  CHECK(w.count("model.layers.0.self_attn.o_proj.bias") == 0);
}

TEST_CASE("MoE experts are split by TP on their width and routers are replicated") {
  auto q = by_name(weights_at("Qwen3-30B-A3B", 4));
  CHECK(q.at("model.layers.0.mlp.gate.weight").shape == Shape{128, 2048});
  CHECK(q.at("model.layers.0.mlp.experts.w13_weight").shape == Shape{128, 2 * 768 / 4, 2048});
  CHECK(q.at("model.layers.0.mlp.experts.w2_weight").shape == Shape{128, 2048, 768 / 4});
  CHECK(q.at("model.layers.0.self_attn.k_norm.weight").shape == Shape{128});

  auto m = by_name(weights_at("Mixtral-8x7B", 8));
  CHECK(m.at("model.layers.31.mlp.experts.w13_weight").shape == Shape{8, 2 * 14336 / 8, 4096});
  CHECK(m.at("model.embed_tokens.weight").shape == Shape{32000 / 8, 4096});
}

TEST_CASE("DeepSeek-V3 MLA, dense prefix, shared expert and FP8 block scales at TP 8") {
  auto w = by_name(weights_at("DeepSeek-V3", 8));
  // Replicated down-projections to the q latent (1536) and the kv latent + rope key (576).
  CHECK(w.at("model.layers.0.self_attn.fused_qkv_a_proj.weight").shape == Shape{1536 + 576, 7168});
  CHECK(w.at("model.layers.0.self_attn.fused_qkv_a_proj.weight").dtype == DType::fp8);
  CHECK(w.at("model.layers.0.self_attn.fused_qkv_a_proj.weight_scale_inv").shape == Shape{17, 56});
  CHECK(w.at("model.layers.0.self_attn.q_a_layernorm.weight").shape == Shape{1536});
  CHECK(w.at("model.layers.0.self_attn.q_b_proj.weight").shape == Shape{16 * 192, 1536});
  CHECK(w.at("model.layers.0.self_attn.kv_a_layernorm.weight").shape == Shape{512});
  CHECK(w.at("model.layers.0.self_attn.kv_b_proj.weight").shape == Shape{16 * 256, 512});
  CHECK(w.at("model.layers.0.self_attn.o_proj.weight").shape == Shape{7168, 16 * 128});
  // Layers 0-2 are dense; 3+ have 256 routed experts and one shared expert.
  CHECK(w.at("model.layers.2.mlp.gate_up_proj.weight").shape == Shape{2 * 18432 / 8, 7168});
  CHECK(w.count("model.layers.2.mlp.experts.w13_weight") == 0);
  CHECK(w.at("model.layers.3.mlp.gate.weight").dtype == DType::bf16);
  CHECK(w.at("model.layers.3.mlp.gate.e_score_correction_bias").dtype == DType::fp32);
  CHECK(w.at("model.layers.3.mlp.shared_experts.gate_up_proj.weight").shape == Shape{2 * 2048 / 8, 7168});
  CHECK(w.at("model.layers.3.mlp.experts.w13_weight").shape == Shape{256, 2 * 256, 7168});
  CHECK(w.at("model.layers.3.mlp.experts.w13_weight_scale_inv").shape == Shape{256, 2 * 2, 56});
  CHECK(w.at("model.layers.3.mlp.experts.w2_weight_scale_inv").shape == Shape{256, 56, 2});
  CHECK(w.at("model.embed_tokens.weight").dtype == DType::bf16);
  CHECK(w.count("model.layers.61.eh_proj.weight") == 0);  // MTP only on request
}

TEST_CASE("TP sizes that do not divide the model are errors") {
  ModelConfig c = catalogue_model("Llama-3.1-8B");
  WeightOptions o;
  o.tp = 3;
  CHECK_THROWS_WITH(model_weights(c, o), "model 'Llama-3.1-8B': total number of attention heads (32) must be "
                                         "divisible by tensor parallel size (3)");
  o.tp = 0;
  CHECK_THROWS_WITH(model_weights(c, o), "tensor parallel size must be at least 1, got 0");
  c.kv_heads = 8;
  c.heads = 48;  // tp 12 > 8 KV heads but not a multiple of 8
  CHECK_THROWS_WITH(tensor_parallel_shard(c, 12), "model 'Llama-3.1-8B': tensor parallel size (12) must be a "
                                                  "multiple of the number of KV heads (8) when it exceeds it");
}
