// Llama 4 (model_type llama4, Llama4ForConditionalGeneration): the text decoder read from
// text_config as vllm/model_executor/models/llama4.py builds it (MoE every
// interleave_moe_layer_step-th layer with a shared expert, dense intermediate_size_mlp layers
// between, chunked local attention on the RoPE layers), and the vision tower and projector of
// vision_config as mllama4.py builds them, counted against Meta's published parameter counts.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "sim/core/error.hpp"
#include "sim/model/attention_layers.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/hf_config.hpp"
#include "sim/model/weights.hpp"
#include "tests/model/weight_tensors.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::model;
namespace fs = std::filesystem;

namespace {

const char* const kScoutId = "meta-llama/Llama-4-Scout-17B-16E-Instruct";

fs::path scout_fixture() {
  return fs::path(HEADROOM_SOURCE_DIR) / "tests" / "model" / "configs" / "meta-llama" /
         "Llama-4-Scout-17B-16E-Instruct";
}

fs::path write_llama4_config(const std::string& text) {
  fs::path dir = headroom::test::temp_dir("llama4") / "acme" / "tiny-llama4";
  fs::create_directories(dir);
  fs::path file = dir / "config.json";
  std::ofstream(file) << text;
  return file;
}

// A small Llama 4 text body; `extra` adds or replaces keys.
std::string llama4_text(const std::string& extra = "") {
  return R"({"model_type": "llama4_text", "hidden_size": 256, "intermediate_size": 128,
    "intermediate_size_mlp": 512, "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 64, "vocab_size": 1024, "max_position_embeddings": 4096, "num_local_experts": 4,
    "num_experts_per_tok": 1, "interleave_moe_layer_step": 2)" +
         extra + "}";
}

}  // namespace

TEST_CASE("Llama-4-Scout's config.json loads to the catalogue entry: text_config and vision_config") {
  ModelConfig loaded = load_hf_config(scout_fixture());
  CHECK(loaded.name == kScoutId);
  ModelConfig expected = catalogue_model(kScoutId);
  expected.name = kScoutId;
  CHECK(loaded == expected);
  // intermediate_size is the experts' (and the shared expert's) width, intermediate_size_mlp the
  // dense layers'; Scout has none (interleave_moe_layer_step 1).
  CHECK(loaded.moe_intermediate == 8192);
  CHECK(loaded.intermediate == 16384);
  CHECK(loaded.shared_experts == 1);
  for (int l = 0; l < loaded.layers; ++l) CHECK(loaded.is_moe_layer(l));
  // no_rope_layers [1, 1, 1, 0, ...]: 36 RoPE layers chunked over 8,192 tokens, 12 NoPE ones full.
  CHECK(loaded.attention_chunk == 8192);
  CHECK(loaded.chunked_layers.size() == 36);
  const std::vector<AttentionLayers> kinds = attention_layer_kinds(loaded);
  REQUIRE(kinds.size() == 2);
  CHECK(kinds[0].kind == AttentionKind::chunked_local);
  CHECK(kinds[1].layers == std::vector<int>{3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47});
  CHECK(loaded.vision.layers == 34);
  CHECK(loaded.vision.hidden == 1408);
}

TEST_CASE("Llama 4 parameters: Scout 108,641,793,536 (Meta: 109B), Maverick within 1% of 400B") {
  // Scout, worked: per layer attention 40 × 128 × 5120 × 2 + 8 × 128 × 5120 × 2 = 62,914,560,
  // router 16 × 5120, experts 16 × 3 × 8192 × 5120, shared expert 3 × 8192 × 5120, two norms:
  // 2,202,101,760; × 48, embedding and head 2 × 202,048 × 5120, final norm: 107,769,861,120.
  // Vision: patch 1408 × 588, class 1408, positions 577 × 1408, two LayerNorms; 34 layers of
  // 4 × 1408² + 2 × 1408 × 5632 with biases and two LayerNorms (23,807,872 each); adapter
  // 5632 × 4096 + 4096 × 4096; projector 4096 × 5120: 871,932,416.
  const std::int64_t scout = parameter_count(catalogue_model(kScoutId));
  CHECK(scout == 107'769'861'120 + 871'932'416);
  // Meta's model card: 109B total parameters (17B active); the checkpoint's total_size was not
  // found in the sources searched. Tolerance 1%.
  CHECK(std::abs(static_cast<double>(scout) / 109e9 - 1) < 0.01);
  WeightOptions stored;
  stored.pad_vocab = false;
  CHECK(model_weights(catalogue_model(kScoutId), stored).bytes == 2 * static_cast<Bytes>(scout));  // bf16: 202.4 GiB
  // Maverick: MoE on odd layers only (interleave_moe_layer_step 2) over 128 experts, dense MLPs of
  // 16,384 between; Meta: 400B total.
  const std::int64_t maverick = parameter_count(catalogue_model("meta-llama/Llama-4-Maverick-17B-128E-Instruct"));
  CHECK(std::abs(static_cast<double>(maverick) / 400e9 - 1) < 0.01);
}

TEST_CASE("Llama 4 weights at TP 4: feed_forward experts, shared_expert and router, the vision tower split") {
  WeightOptions tp4;
  tp4.tp = 4;
  auto w = headroom::test::tensors_by_name(model_weights(catalogue_model(kScoutId), tp4));
  using Shape = std::vector<std::int64_t>;
  CHECK(w.at("model.layers.0.feed_forward.router.weight").shape == Shape{16, 5120});
  CHECK(w.at("model.layers.0.feed_forward.experts.w13_weight").shape == Shape{16, 2 * 2048, 5120});
  CHECK(w.at("model.layers.0.feed_forward.experts.w2_weight").shape == Shape{16, 5120, 2048});
  CHECK(w.at("model.layers.0.feed_forward.shared_expert.gate_up_proj.weight").shape == Shape{2 * 2048, 5120});
  CHECK(w.at("model.layers.0.self_attn.qkv_proj.weight").shape == Shape{(10 + 2 * 2) * 128, 5120});
  CHECK(w.count("model.layers.0.self_attn.q_norm.weight") == 0);  // use_qk_norm: no weight
  // Vision: 16 heads of 88 over 4 ranks; MLP 5632 / 4; adapter 4096 / 4; projector 5120 / 4.
  CHECK(w.at("vision_model.model.layers.0.self_attn.qkv_proj.weight").shape == Shape{3 * 4 * 88, 1408});
  CHECK(w.at("vision_model.model.layers.0.self_attn.o_proj.bias").shape == Shape{1408});
  CHECK(w.at("vision_model.model.layers.0.mlp.fc1.weight").shape == Shape{1408, 1408});
  CHECK(w.at("vision_model.vision_adapter.mlp.fc1.weight").shape == Shape{1024, 5632});
  CHECK(w.at("vision_model.positional_embedding_vlm").shape == Shape{577, 1408});
  CHECK(w.at("multi_modal_projector.linear_1.weight").shape == Shape{1280, 4096});
  // Pipeline parallel 2: the second stage holds no embedding but the whole vision tower again
  // (mllama4.py builds it on every stage).
  WeightOptions pp2;
  pp2.placement = RankPlacement::tensor_parallel(1);
  pp2.placement->pp = 2;
  pp2.placement->pp_rank = 1;
  auto second = headroom::test::tensors_by_name(model_weights(catalogue_model(kScoutId), pp2));
  CHECK(second.count("model.embed_tokens.weight") == 0);
  CHECK(second.at("vision_model.model.layers.33.mlp.fc2.weight").shape == Shape{1408, 5632});
  // Maverick's even layers are dense: feed_forward.gate_up_proj [2 × 16384 / 4, 5120].
  auto m = headroom::test::tensors_by_name(model_weights(catalogue_model("Llama-4-Maverick-17B-128E-Instruct"), tp4));
  CHECK(m.at("model.layers.0.feed_forward.gate_up_proj.weight").shape == Shape{2 * 4096, 5120});
  CHECK(m.at("model.layers.1.feed_forward.experts.w13_weight").shape == Shape{128, 2 * 2048, 5120});
}

TEST_CASE("Llama 4 config readers: text-only bodies, Llama4TextConfig defaults, bad keys") {
  // A Llama4ForCausalLM body: no vision tower; interleave 2 puts MoE on layers 1, 3, 5, 7; no
  // no_rope_layers: NoPE every fourth layer (no_rope_layer_interval 4); attention_chunk_size 8192.
  ModelConfig t = load_hf_config(write_llama4_config(llama4_text()));
  CHECK(t.architecture == Architecture::llama4);
  CHECK(t.vision.layers == 0);
  CHECK(t.is_moe_layer(1));
  CHECK_FALSE(t.is_moe_layer(2));
  CHECK(t.attention_chunk == 8192);
  CHECK(t.chunked_layers == std::vector<int>{0, 1, 2, 4, 5, 6});
  // attention_chunk_size null: every layer full attention.
  CHECK(load_hf_config(write_llama4_config(llama4_text(R"(, "attention_chunk_size": null)"))).chunked_layers.empty());
  CHECK_THROWS_WITH(load_hf_config(write_llama4_config(llama4_text(R"(, "no_rope_layers": [1, 0])"))),
                    Catch::Contains("key 'no_rope_layers': expected a list of 8 entries (num_hidden_layers) of 0 or 1"));
  CHECK_THROWS_WITH(load_hf_config(write_llama4_config(llama4_text(R"(, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]})"))),
                    Catch::Contains("a quantized Llama 4 checkpoint (fp8 block) is not modelled"));
  CHECK_THROWS_WITH(load_hf_config(write_llama4_config(R"({"model_type": "llama4", "vision_config": {}})")),
                    Catch::Contains("key 'text_config' is missing (model_type 'llama4' needs it)"));
  CHECK_THROWS_WITH(load_hf_config(write_llama4_config(R"({"model_type": "llama4", "text_config": )" + llama4_text() +
                                                       "}")),
                    Catch::Contains("key 'vision_config' is missing (model_type 'llama4' needs it)"));
  CHECK_THROWS_WITH(load_hf_config(write_llama4_config(llama4_text(R"(, "intermediate_size_mlp": null)"))),
                    Catch::Contains("key 'intermediate_size_mlp' is missing (model_type 'llama4' needs it)"));
}
