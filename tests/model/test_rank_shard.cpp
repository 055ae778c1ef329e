// One rank's share of a model under tensor, pipeline and expert parallelism (tensor_parallel.hpp):
// worked numbers from vLLM's sharding rules (linear.py, vocab_parallel_embedding.py,
// distributed/utils.py get_pp_indices, fused_moe determine_expert_map and FusedMoEParallelConfig).
#include <catch2/catch.hpp>

#include <map>

#include "sim/core/error.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/tensor_parallel.hpp"
#include "sim/model/weights.hpp"
#include "tests/model/weight_tensors.hpp"

using namespace headroom;
using namespace headroom::model;
using headroom::test::tensors_by_name;
using Shape = std::vector<std::int64_t>;

namespace {

WeightList weights_placed(const ModelConfig& c, const RankPlacement& p) {
  WeightOptions o;
  o.placement = p;
  return model_weights(c, o);
}

}  // namespace

TEST_CASE("Llama-3.1-70B at TP4: 35,278,831,616 weight bytes and 80 KiB of KV per token on each rank") {
  const ModelConfig c = catalogue_model("Llama-3.1-70B");
  // Per layer: qkv (16 + 2 × 2) × 128 rows × 8192, o_proj 8192 × 2048, gate_up 2 × 7168 × 8192,
  // down 8192 × 7168, two norms of 8192; bf16. Embedding and lm_head 128,256 / 4 = 32,064 rows.
  const Bytes layer = (2560ull * 8192 + 8192ull * 2048 + 14336ull * 8192 + 8192ull * 7168 + 2 * 8192) * 2;
  CHECK(layer == 427'851'776);
  const Bytes expected = 80 * layer + 2 * 32064ull * 8192 * 2 + 8192 * 2;
  CHECK(expected == 35'278'831'616);
  WeightOptions o;
  o.tp = 4;
  CHECK(model_weights(c, o).bytes == expected);
  // 2 KV heads per rank × 128 × K and V × 2 B × 80 layers.
  CHECK(kv_layout(c, Engine::vllm, KvCacheDtype::model, 4).bytes_per_token == 81'920);
  CHECK(kv_layout(c, Engine::vllm, KvCacheDtype::fp8, 4).bytes_per_token == 40'960);
}

TEST_CASE("pipeline stages as vLLM's get_pp_indices splits the layers") {
  // vllm tests/distributed/test_pipeline_partition.py goldens, and the remainder rule.
  CHECK(pipeline_stage_layers(20, 4) == std::vector<int>{5, 5, 5, 5});
  CHECK(pipeline_stage_layers(22, 4) == std::vector<int>{5, 6, 6, 5});
  CHECK(pipeline_stage_layers(80, 3) == std::vector<int>{27, 27, 26});
  CHECK(pipeline_stage_layers(61, 4) == std::vector<int>{15, 15, 16, 15});
  CHECK(pipeline_stage_layers(3, 2) == std::vector<int>{2, 1});

  const ModelConfig c = catalogue_model("Llama-3.1-70B");
  RankPlacement p = RankPlacement::tensor_parallel(2);
  p.pp = 3;
  p.pp_rank = 0;
  auto first = tensors_by_name(weights_placed(c, p));
  CHECK(first.count("model.embed_tokens.weight") == 1);
  CHECK(first.count("lm_head.weight") == 0);
  CHECK(first.count("model.layers.26.mlp.down_proj.weight") == 1);
  CHECK(first.count("model.layers.27.mlp.down_proj.weight") == 0);
  p.pp_rank = 2;
  auto last = tensors_by_name(weights_placed(c, p));
  CHECK(last.count("model.embed_tokens.weight") == 0);
  CHECK(last.count("lm_head.weight") == 1);
  CHECK(last.count("model.norm.weight") == 1);
  CHECK(last.count("model.layers.54.input_layernorm.weight") == 1);
  CHECK(last.count("model.layers.53.input_layernorm.weight") == 0);
  // KV for the stage's own layers: 26 layers × 4 KV heads × 128 × 2 × 2 B.
  CHECK(kv_layout(c, KvPoolRules{"vllm", true}, KvCacheDtype::model, p).layers == 26);
  CHECK(kv_layout(c, KvPoolRules{"vllm", true}, KvCacheDtype::model, p).bytes_per_token == 26ull * 4 * 128 * 2 * 2);
  // Tied embeddings: the last stage keeps embed_tokens too (vllm llama.py LlamaModel).
  ModelConfig tied = c;
  tied.tie_word_embeddings = true;
  auto tied_last = tensors_by_name(weights_placed(tied, p));
  CHECK(tied_last.count("model.embed_tokens.weight") == 1);
  CHECK(tied_last.count("lm_head.weight") == 0);
}

TEST_CASE("expert parallelism: whole experts per rank, one more on the first E % ep ranks") {
  CHECK(local_expert_count(256, 3, 0) == 86);
  CHECK(local_expert_count(256, 3, 2) == 85);
  CHECK(local_expert_count(128, 8, 7) == 16);
  const ModelConfig c = catalogue_model("Qwen3-30B-A3B");
  // vLLM --enable-expert-parallel at tp 1, dp 3: ep 3, expert TP 1 (FusedMoEParallelConfig.make).
  RankPlacement ep = RankPlacement::tensor_parallel(1);
  ep.moe_ep = 3;
  auto w = tensors_by_name(weights_placed(c, ep));
  CHECK(w.at("model.layers.0.mlp.experts.w13_weight").shape == Shape{43, 2 * 768, 2048});
  CHECK(w.at("model.layers.0.mlp.experts.w2_weight").shape == Shape{43, 2048, 768});
  CHECK(w.at("model.layers.0.mlp.gate.weight").shape == Shape{128, 2048});  // the router sees every expert
  ep.ep_rank = 2;
  CHECK(tensors_by_name(weights_placed(c, ep)).at("model.layers.0.mlp.experts.w13_weight").shape ==
        Shape{42, 2 * 768, 2048});
  // Without EP vLLM splits each expert's width over dp × tp = 3 ranks: 768 / 3 = 256.
  RankPlacement flat = RankPlacement::tensor_parallel(1);
  flat.moe_tp = 3;
  CHECK(tensors_by_name(weights_placed(c, flat)).at("model.layers.0.mlp.experts.w13_weight").shape ==
        Shape{128, 2 * 256, 2048});
  // SGLang --tp 4 --ep-size 2: 64 experts per rank, each split over tp / ep = 2 ranks.
  RankPlacement sg = RankPlacement::tensor_parallel(4);
  sg.moe_ep = 2;
  sg.moe_tp = 2;
  auto s = tensors_by_name(weights_placed(c, sg));
  CHECK(s.at("model.layers.0.mlp.experts.w13_weight").shape == Shape{64, 2 * 384, 2048});
  CHECK(s.at("model.layers.0.self_attn.qkv_proj.weight").shape == Shape{(8 + 2 * 1) * 128, 2048});
}

TEST_CASE("data-parallel attention: heads and KV over the attention TP group only") {
  const ModelConfig c = catalogue_model("Qwen3-30B-A3B");  // 32 query heads, 4 KV heads
  RankPlacement p = RankPlacement::tensor_parallel(8);
  p.attn_tp = 2;  // SGLang --tp 8 --dp 4 --enable-dp-attention
  const TensorParallelShard s = rank_shard(c, p);
  CHECK(s.q_heads == 16);
  CHECK(s.kv_heads == 2);
  CHECK(kv_layout(c, KvPoolRules{"sglang", false}, KvCacheDtype::model, p).bytes_per_token == 48ull * 2 * 2 * 128 * 2);
  CHECK(s.vocab == 151936 / 8);  // the lm_head stays on the whole TP group
}

TEST_CASE("shapes a parallel size cannot split are refused with the model's rule") {
  const ModelConfig c = catalogue_model("Qwen3-30B-A3B");
  RankPlacement p = RankPlacement::tensor_parallel(1);
  p.moe_ep = 129;
  CHECK_THROWS_WITH(rank_shard(c, p), "model 'Qwen3-30B-A3B': expert parallel size (129) exceeds the number of experts (128)");
  p = RankPlacement::tensor_parallel(1);
  p.moe_tp = 5;
  CHECK_THROWS_WITH(rank_shard(c, p),
                    "model 'Qwen3-30B-A3B': moe intermediate size (768) must be divisible by expert tensor parallel size (5)");
  p = RankPlacement::tensor_parallel(1);
  p.pp = 49;
  CHECK_THROWS_WITH(rank_shard(c, p), "model 'Qwen3-30B-A3B': pipeline parallel size (49) exceeds the number of layers (48)");
  p = RankPlacement::tensor_parallel(1);
  p.moe_ep = 2;
  CHECK_THROWS_WITH(rank_shard(catalogue_model("Llama-3.1-8B"), p),
                    "model 'Llama-3.1-8B' has no experts: expert parallel size must be 1, got 2");
}
