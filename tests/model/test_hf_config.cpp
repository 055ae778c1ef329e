// Reading Hugging Face config.json files: the catalogue's own configs, small configs written here,
// and malformed ones with their exact messages.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "sim/core/error.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/hf_config.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/weights.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::model;
namespace fs = std::filesystem;

namespace {

fs::path fixture(const std::string& model) {
  return fs::path(HEADROOM_SOURCE_DIR) / "tests" / "model" / "configs" / model;
}

// Writes `text` as <fresh temp dir>/<folder>/config.json and returns the file's path.
fs::path write_config(const std::string& folder, const std::string& text) {
  fs::path dir = headroom::test::temp_dir("hf") / folder;
  fs::create_directories(dir);
  fs::path file = dir / "config.json";
  std::ofstream(file) << text;
  return file;
}

// A small Llama config; `extra` replaces or adds keys (written after the defaults, so it wins).
std::string llama_json(const std::string& extra = "") {
  return R"({"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2,
    "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 2048,
    "torch_dtype": "bfloat16")" +
         extra + "}";
}

}  // namespace

TEST_CASE("the catalogue models' config.json files load to the catalogue entries, named by their Hub id") {
  for (const char* id : {"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B", "Qwen/Qwen2.5-7B", "Qwen/Qwen3-30B-A3B",
                         "deepseek-ai/DeepSeek-R1", "mistralai/Mixtral-8x7B-v0.1", "mistralai/Mistral-7B-v0.3",
                         "deepseek-ai/DeepSeek-V2-Lite", "openai/gpt-oss-20b", "google/gemma-2-9b-it",
                         "google/gemma-3-1b-it"}) {
    INFO(id);
    ModelConfig loaded = load_hf_config(fixture(id));  // the folder
    CHECK(loaded.name == id);                          // its parent and name: no _name_or_path in these
    ModelConfig expected = catalogue_model(id);
    expected.name = id;
    CHECK(loaded == expected);
    CHECK(load_hf_config(fixture(id) / "config.json") == loaded);  // or the file itself
  }
}

TEST_CASE("a model given by its config.json is named by _name_or_path, the cache's id, or parent/name") {
  const std::string body = llama_json();
  auto with_name = [&](const std::string& value) { return llama_json(", \"_name_or_path\": " + value); };
  // The folder's own name ("models") is never the whole name (issue 17).
  CHECK(load_hf_config(write_config("models", body)).name.ends_with("/models"));
  CHECK(load_hf_config(write_config("acme/tiny", body)).name == "acme/tiny");
  // transformers writes the Hub id it loaded from.
  CHECK(load_hf_config(write_config("models", with_name(R"("acme/Tiny-Llama")"))).name == "acme/Tiny-Llama");
  // A local path it saved from names another machine's disk: its last two parts.
  CHECK(load_hf_config(write_config("models", with_name(R"("/home/u/ckpt/tiny-llama/")"))).name == "ckpt/tiny-llama");
  CHECK(load_hf_config(write_config("acme/tiny", with_name(R"("")"))).name == "acme/tiny");
  // The Hugging Face cache: models--<org>--<name>/snapshots/<revision>/config.json.
  CHECK(load_hf_config(write_config("models--acme--Tiny-Llama/snapshots/0123abc", body)).name == "acme/Tiny-Llama");
  // A bad _name_or_path is an error naming the key.
  fs::path f = write_config("bad-name", with_name("7"));
  CHECK_THROWS_WITH(load_hf_config(f), f.string() + ": key '_name_or_path': expected a string, got 7");
  f = write_config("ctrl-name", with_name(R"("a\u0007b")"));
  CHECK_THROWS_WITH(load_hf_config(f), f.string() + ": key '_name_or_path': expected a name without control characters");
}

TEST_CASE("a Qwen3 config with an explicit head_dim and tied embeddings") {
  // Qwen3's head_dim (128) is not hidden / heads (1024 / 16 = 64).
  fs::path file = write_config("tiny-qwen3", R"({
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024, "head_dim": 128,
    "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
    "vocab_size": 151936, "max_position_embeddings": 40960, "tie_word_embeddings": true,
    "torch_dtype": "bfloat16", "attention_bias": false, "use_sliding_window": false, "sliding_window": null})");
  ModelConfig c = load_hf_config(file);
  CHECK(c.name.ends_with("/tiny-qwen3"));  // the folder's parent and name
  CHECK(c.architecture == Architecture::qwen3);
  CHECK(c.head_dim == 128);
  CHECK(c.tie_word_embeddings);
  CHECK(c.has_qk_norm());
  CHECK(kv_layout(c, Engine::vllm, KvCacheDtype::model).bytes_per_token == 2 * 8 * 128 * 28 * 2);
  WeightList w = model_weights(c);
  // Tied: no lm_head tensor; q/k norms of head_dim per layer; qkv rows (16 + 2·8)·128.
  for (const auto& t : w.tensors) CHECK(t.name != "lm_head.weight");
  CHECK(w.tensors[1].name == "model.layers.0.self_attn.qkv_proj.weight");
  CHECK(w.tensors[1].shape == std::vector<std::int64_t>{32 * 128, 1024});
  CHECK(w.tensors[3].name == "model.layers.0.self_attn.q_norm.weight");
  CHECK(w.tensors[3].shape == std::vector<std::int64_t>{128});
  std::int64_t per_layer = 1024 * 2048 + 2 * 1024 * 1024 + 2048 * 1024 + 2 * 128 + 3 * 1024 * 3072 + 2 * 1024;
  CHECK(parameter_count(c) == 28 * per_layer + 151936 * 1024 + 1024);  // 596,049,920: Qwen3-0.6B's shape
}

TEST_CASE("optional keys take the transformers defaults") {
  // LlamaConfig: num_key_value_heads falls back to num_attention_heads; head_dim to hidden / heads.
  ModelConfig c = load_hf_config(write_config("mha", R"({"model_type": "llama", "hidden_size": 512,
    "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 1000,
    "max_position_embeddings": 2048})"));
  CHECK(c.kv_heads == 8);
  CHECK(c.head_dim == 64);
  CHECK_FALSE(c.tie_word_embeddings);
  // No torch_dtype counts as float32, which vLLM's --dtype auto serves as bf16.
  CHECK(c.dtype == DType::bf16);
  CHECK(load_hf_config(write_config("f16", llama_json(R"(, "torch_dtype": "float16")"))).dtype == DType::fp16);
  CHECK(load_hf_config(write_config("f32", llama_json(R"(, "torch_dtype": "float32")"))).dtype == DType::bf16);
  // Newer transformers write "dtype".
  CHECK(load_hf_config(write_config("new", R"({"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024,
    "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 1000, "max_position_embeddings": 2048,
    "dtype": "float16"})")).dtype == DType::fp16);
  // attention_bias puts biases on q/k/v and o_proj.
  ModelConfig biased = load_hf_config(write_config("bias", llama_json(R"(, "attention_bias": true)")));
  CHECK(biased.qkv_bias);
  CHECK(biased.o_proj_bias);
}

TEST_CASE("quantization_config: each format's keys") {
  auto quant = [](const std::string& folder, const std::string& config) {
    return load_hf_config(write_config(folder, llama_json(R"(, "quantization_config": )" + config))).quantization;
  };
  using M = WeightQuantization::Method;
  // fp8 without weight_block_size: one scale per tensor (Fp8Config); static activations add input scales.
  WeightQuantization q = quant("fp8", R"({"quant_method": "fp8", "activation_scheme": "static"})");
  CHECK(q.method == M::fp8_tensor);
  CHECK(q.static_input_scale);
  // compressed-tensors FP8, as llm-compressor writes it (RedHatAI ...-FP8-dynamic: channel, dynamic tokens).
  q = quant("ct-fp8", R"({"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float",
    "strategy": "channel", "dynamic": false, "symmetric": true}, "input_activations": {"num_bits": 8,
    "type": "float", "strategy": "token", "dynamic": true}}}})");
  CHECK(q.method == M::fp8_channel);
  CHECK_FALSE(q.static_input_scale);
  q = quant("ct-fp8-static", R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights":
    {"num_bits": 8, "type": "float", "strategy": "tensor"}, "input_activations": {"num_bits": 8, "type": "float",
    "strategy": "tensor", "dynamic": false}}}})");
  CHECK(q.method == M::fp8_tensor);
  CHECK(q.static_input_scale);
  q = quant("ct-nvfp4", R"({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
    "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group",
    "group_size": 16}}}})");
  CHECK(q.method == M::nvfp4);
  CHECK(q.group_size == 16);
  // compressed-tensors W4A16 as RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16 writes it.
  q = quant("ct-w4a16", R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
    "strategy": "group", "group_size": 128, "symmetric": true, "actorder": null, "dynamic": false},
    "input_activations": null}}})");
  CHECK((q.method == M::wna16 && q.bits == 4 && q.group_size == 128 && !q.act_order));
  q = quant("ct-w8a16-ch", R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"format":
    "pack-quantized", "weights": {"num_bits": 8, "type": "int", "strategy": "channel", "actorder": "weight"}}}})");
  CHECK((q.method == M::wna16 && q.bits == 8 && q.group_size == 0 && !q.act_order));
  q = quant("ct-w4a16-act", R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups":
    {"group_0": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 64,
    "actorder": "group"}}}})");
  CHECK((q.method == M::wna16 && q.group_size == 64 && q.act_order));
  // GPTQ (AutoGPTQ / GPTQModel): -1 is one group per row.
  q = quant("gptq", R"({"quant_method": "gptq", "bits": 4, "group_size": -1, "desc_act": true, "sym": true})");
  CHECK((q.method == M::gptq && q.bits == 4 && q.group_size == 0 && q.act_order));
  // AWQ (AutoAWQ writes bits/group_size; older configs w_bit/q_group_size).
  q = quant("awq", R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true, "version": "gemm",
    "modules_to_not_convert": null})");
  CHECK((q.method == M::awq && q.bits == 4 && q.group_size == 128));
  q = quant("awq-old", R"({"quant_method": "awq", "w_bit": 4, "q_group_size": 64})");
  CHECK((q.method == M::awq && q.group_size == 64));
  // ModelOpt NVFP4 and FP8 (nvidia/*-FP4, *-FP8 checkpoints; hf_quant_config.json nests under "quantization").
  q = quant("modelopt", R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
    "exclude_modules": ["lm_head"]})");
  CHECK((q.method == M::nvfp4 && q.group_size == 16));
  q = quant("modelopt-fp8", R"({"quant_method": "modelopt", "quantization": {"quant_algo": "FP8"}})");
  CHECK((q.method == M::fp8_tensor && q.static_input_scale));
}

TEST_CASE("gpt-oss: sinks, sliding and full layers, MXFP4 experts") {
  ModelConfig c = load_hf_config(fixture("openai/gpt-oss-20b"));
  CHECK(c.architecture == Architecture::gpt_oss);
  CHECK(c.quantization.method == WeightQuantization::Method::mxfp4);
  CHECK(c.sliding_window == 128);
  CHECK(c.sliding_layers.size() == 12);
  CHECK(c.sliding_layers.front() == 0);
  CHECK(c.sliding_layers.back() == 22);
  CHECK(c.attention_sinks);
  CHECK(c.experts == 32);
  CHECK(c.experts_per_token == 4);
}

TEST_CASE("Gemma 2 and Gemma 3: windowed layers from layer_types, else every other one or five of six") {
  ModelConfig g2 = load_hf_config(fixture("google/gemma-2-9b-it"));
  CHECK(g2.architecture == Architecture::gemma2);
  CHECK(g2.sliding_window == 4096);
  CHECK(g2.sliding_layers.size() == 21);  // Gemma2Config: layers 0, 2, ..., 40
  CHECK(g2.sliding_layers.back() == 40);
  CHECK(g2.tie_word_embeddings);          // absent: Gemma2Config's default
  CHECK(g2.head_dim == 256);
  ModelConfig g3 = load_hf_config(fixture("google/gemma-3-1b-it"));
  CHECK(g3.architecture == Architecture::gemma3_text);
  CHECK(g3.sliding_window == 512);
  CHECK(g3.sliding_layers.size() == 22);  // sliding_window_pattern 6: full at 5, 11, 17, 23
  CHECK(g3.has_qk_norm());
  // layer_types, when written, decides; a wrong length or entry is an error naming the key.
  const std::string gemma = R"({"model_type": "gemma3_text", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32, "vocab_size": 100,
    "max_position_embeddings": 256, "sliding_window": 16)";
  ModelConfig listed = load_hf_config(write_config("gemma-types", gemma + R"(, "layer_types": ["full_attention",
    "sliding_attention", "full_attention"]})"));
  CHECK(listed.sliding_layers == std::vector<int>{1});
  CHECK_THROWS_WITH(load_hf_config(write_config("gemma-types-short", gemma + R"(, "layer_types": ["full_attention"]})")),
                    Catch::Contains("key 'layer_types': expected a list of 3 entries (num_hidden_layers), got 1"));
  CHECK_THROWS_WITH(load_hf_config(write_config("gemma-no-window", R"({"model_type": "gemma2", "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
    "head_dim": 32, "vocab_size": 100, "max_position_embeddings": 256})")),
                    Catch::Contains("key 'sliding_window' is missing (model_type 'gemma2' needs it)"));
  // The multimodal Gemma 3 says what to give instead (Llama 4: tests/model/test_llama4.cpp).
  CHECK_THROWS_WITH(load_hf_config(write_config("gemma3-mm", R"({"model_type": "gemma3"})")),
                    Catch::Contains("model_type 'gemma3' is Gemma 3's multimodal model, whose vision tower is not modelled"));
}

TEST_CASE("architectures names the model when model_type is absent") {
  ModelConfig c = load_hf_config(write_config("no-type", R"({"architectures": ["MixtralForCausalLM"],
    "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
    "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 2048, "num_local_experts": 4,
    "num_experts_per_tok": 2})"));
  CHECK(c.architecture == Architecture::mixtral);
  CHECK(c.experts == 4);
  CHECK(c.moe_intermediate == 1024);
}

TEST_CASE("Qwen3-MoE dense layers and DeepSeek dense prefix") {
  ModelConfig q = catalogue_model("Qwen3-30B-A3B");
  q.dense_layers = {0, 5};
  q.moe_layer_step = 1;
  CHECK_FALSE(q.is_moe_layer(0));
  CHECK(q.is_moe_layer(1));
  CHECK_FALSE(q.is_moe_layer(5));
  q.dense_layers = {};
  q.moe_layer_step = 2;  // decoder_sparse_step 2: layers 1, 3, 5, ... are sparse
  CHECK_FALSE(q.is_moe_layer(0));
  CHECK(q.is_moe_layer(1));
  ModelConfig d = catalogue_model("DeepSeek-V3");
  CHECK_FALSE(d.is_moe_layer(2));
  CHECK(d.is_moe_layer(3));
  CHECK(d.is_moe_layer(60));
}

TEST_CASE("malformed config.json files are errors naming the file and the key") {
  auto error_of = [](const fs::path& file) -> std::string {
    try {
      load_hf_config(file);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  fs::path f = write_config("bad", llama_json(R"(, "num_key_value_heads": "8")"));
  CHECK(error_of(f) == f.string() + ": key 'num_key_value_heads': expected an integer, got string");

  f = write_config("gpt2", R"({"model_type": "gpt2", "n_embd": 768})");
  CHECK(error_of(f) == f.string() +
                           ": model_type 'gpt2' is not supported (supported: llama, qwen2, qwen3, qwen3_moe, "
                           "mixtral, deepseek_v3, mistral, deepseek_v2, gpt_oss, gemma2, gemma3_text, llama4)");

  f = write_config("arch", R"({"architectures": ["GPT2LMHeadModel"]})");
  CHECK(error_of(f) == f.string() +
                           ": architectures 'GPT2LMHeadModel' is not supported (supported: LlamaForCausalLM, "
                           "Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, MixtralForCausalLM, "
                           "DeepseekV3ForCausalLM, MistralForCausalLM, DeepseekV2ForCausalLM, GptOssForCausalLM, "
                          "Gemma2ForCausalLM, Gemma3ForCausalLM, Llama4ForConditionalGeneration, Llama4ForCausalLM)");

  f = write_config("none", R"({"hidden_size": 512})");
  CHECK(error_of(f) == f.string() +
                           ": key 'model_type' is missing (supported: llama, qwen2, qwen3, qwen3_moe, mixtral, "
                           "deepseek_v3, mistral, deepseek_v2, gpt_oss, gemma2, gemma3_text, llama4)");

  f = write_config("nohidden", R"({"model_type": "llama", "num_hidden_layers": 2})");
  CHECK(error_of(f) == f.string() + ": key 'hidden_size' is missing (model_type 'llama' needs it)");

  f = write_config("zero", llama_json(R"(, "num_hidden_layers": 0)"));
  CHECK(error_of(f) == f.string() + ": key 'num_hidden_layers': expected a positive integer, got 0");

  f = write_config("frac", llama_json(R"(, "hidden_size": 4096.5)"));
  CHECK(error_of(f) == f.string() + ": key 'hidden_size': expected an integer, got number 4096.5");

  f = write_config("tie", llama_json(R"(, "tie_word_embeddings": "yes")"));
  CHECK(error_of(f) == f.string() + ": key 'tie_word_embeddings': expected true or false, got string");

  f = write_config("dtype", llama_json(R"(, "torch_dtype": "int8")"));
  CHECK(error_of(f) == f.string() + ": key 'torch_dtype': expected bfloat16, float16 or float32, got 'int8'");

  f = write_config("qwen3-nohd", R"({"model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072,
    "num_hidden_layers": 2, "num_attention_heads": 16, "num_key_value_heads": 8, "vocab_size": 1000,
    "max_position_embeddings": 4096})");
  CHECK(error_of(f) == f.string() + ": key 'head_dim' is missing (model_type 'qwen3' needs it)");

  f = write_config("awq", llama_json(R"(, "quantization_config": {"quant_method": "awq", "bits": 4})"));
  CHECK(error_of(f) == f.string() + ": key 'quantization_config.group_size' is missing");

  f = write_config("bnb", llama_json(R"(, "quantization_config": {"quant_method": "bitsandbytes"})"));
  CHECK(error_of(f) == f.string() +
                           ": key 'quantization_config.quant_method': 'bitsandbytes' is not supported (supported: fp8, "
                           "compressed-tensors, gptq, awq, mxfp4, modelopt)");

  f = write_config("gptq3", llama_json(R"(, "quantization_config": {"quant_method": "gptq", "bits": 3,
    "group_size": 128})"));
  CHECK(error_of(f) == f.string() + ": key 'quantization_config.bits': bits 3 is not modelled (expected 4 or 8)");

  f = write_config("gptq0", llama_json(R"(, "quantization_config": {"quant_method": "gptq", "bits": 4,
    "group_size": 0})"));
  CHECK(error_of(f) == f.string() +
                           ": key 'quantization_config.group_size': expected a positive group size or -1 (one group "
                           "per row), got 0");

  f = write_config("awq-skip", llama_json(R"(, "quantization_config": {"quant_method": "awq", "bits": 4,
    "group_size": 128, "modules_to_not_convert": ["gate", "model.layers.0.mlp.down_proj"]})"));
  CHECK(error_of(f) == f.string() +
                           ": key 'quantization_config.modules_to_not_convert': 'model.layers.0.mlp.down_proj' leaves a "
                           "quantizable layer unquantized, which is not modelled (modelled: lm_head, embeddings and MoE "
                           "routers)");

  f = write_config("ct-w4a16-asym", llama_json(R"(, "quantization_config": {"quant_method": "compressed-tensors",
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
    "strategy": "group", "group_size": 128, "symmetric": false}}}, "format": "pack-quantized"})"));
  CHECK(error_of(f) == f.string() +
                           ": key 'quantization_config.config_groups.group_0.weights.symmetric': false (zero points) "
                           "is not modelled; expected true");
  f = write_config("ct-w8a8-int", llama_json(R"(, "quantization_config": {"quant_method": "compressed-tensors",
    "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "int", "strategy": "channel"},
    "input_activations": {"num_bits": 8, "type": "int", "strategy": "token", "dynamic": true}}},
    "format": "int-quantized"})"));
  CHECK(error_of(f) == f.string() +
                           ": key 'quantization_config.format': 'int-quantized' with integer weights is not modelled "
                           "(modelled: pack-quantized, W4A16/W8A16)");
  f = write_config("ct-w4a16-nogroup", llama_json(R"(, "quantization_config": {"quant_method": "compressed-tensors",
    "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "strategy": "group"}}},
    "format": "pack-quantized"})"));
  CHECK(error_of(f) == f.string() + ": key 'quantization_config.config_groups.group_0.weights.group_size' is missing");
  f = write_config("ct-int-block", llama_json(R"(, "quantization_config": {"quant_method": "compressed-tensors",
    "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "strategy": "block"}}}})"));
  CHECK(error_of(f) == f.string() +
                           ": key 'quantization_config.config_groups.group_0.weights.type': num_bits 4 type 'int' "
                           "strategy 'block' is not modelled (modelled: num_bits 8 type float strategy tensor or "
                           "channel (FP8); num_bits 4 type float group_size 16 (NVFP4); num_bits 4 or 8 type int "
                           "strategy group or channel (pack-quantized W4A16/W8A16))");

  f = write_config("modelopt", llama_json(R"(, "quantization_config": {"quant_method": "modelopt",
    "quant_algo": "W4A8_AWQ"})"));
  CHECK(error_of(f) == f.string() +
                           ": key 'quantization_config.quant_algo': 'W4A8_AWQ' is not supported (supported: FP8, NVFP4)");

  f = write_config("mxfp4-dense", llama_json(R"(, "quantization_config": {"quant_method": "mxfp4"})"));
  CHECK(error_of(f) == f.string() +
                           ": key 'quantization_config.quant_method': mxfp4 quantizes MoE experts only, and model_type "
                           "'llama' here has none");

  f = write_config("mistral-swa", R"({"model_type": "mistral", "hidden_size": 512, "intermediate_size": 1024,
    "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000,
    "max_position_embeddings": 2048, "sliding_window": 4096})");
  CHECK(error_of(f) == f.string() + ": key 'sliding_window': sliding-window attention is not modelled (expected null)");

  f = write_config("oss-types", R"({"model_type": "gpt_oss", "hidden_size": 512, "intermediate_size": 512,
    "head_dim": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000,
    "max_position_embeddings": 2048, "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 128,
    "layer_types": ["sliding_attention", "chunked_attention"]})");
  CHECK(error_of(f) == f.string() +
                           ": key 'layer_types': entry 1: expected sliding_attention or full_attention, got "
                           "'chunked_attention'");

  f = write_config("swa", R"({"model_type": "qwen2", "hidden_size": 512, "intermediate_size": 1024,
    "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000,
    "max_position_embeddings": 2048, "use_sliding_window": true})");
  CHECK(error_of(f) == f.string() +
                           ": key 'use_sliding_window': sliding-window attention is not modelled (expected false)");

  f = write_config("heads", R"({"model_type": "llama", "hidden_size": 500, "intermediate_size": 1024,
    "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 1000, "max_position_embeddings": 2048})");
  CHECK(error_of(f) == f.string() +
                           ": hidden_size (500) is not divisible by num_attention_heads (8); give head_dim");

  f = write_config("list", "[1, 2]");
  CHECK(error_of(f) == f.string() + ": expected a JSON object at the top level, got array");

  f = write_config("syntax", "{\"model_type\": \"llama\",\n  \"hidden_size\": }");
  CHECK(error_of(f) == f.string() +
                           ": not valid JSON: parse error at line 2, column 18: syntax error while parsing value - "
                           "unexpected '}'; expected '[', '{', or a literal");

  fs::path missing = headroom::test::temp_dir("hf") / "absent";
  CHECK(error_of(missing) == (missing).string() + ": cannot open the model config");
}
