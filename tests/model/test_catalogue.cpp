// The built-in catalogue against docs/serving-memory-model.md §7: parameter counts, bf16 weight bytes
// and KV bytes per token.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/core/error.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/weights.hpp"

using namespace headroom;
using namespace headroom::model;

namespace {

// |actual − documented| within 0.5% of the documented figure.
bool within_half_percent(double actual, double documented) {
  return std::abs(actual - documented) <= 0.005 * documented;
}

// The model with unquantized weights in its dtype (DeepSeek ships FP8; §7 quotes its bf16 size).
ModelConfig unquantized(ModelConfig c) {
  c.quantization = {};
  return c;
}

struct Row {
  const char* name;
  double params;       // §7 "params"
  double bf16_bytes;   // §7 "bf16 weights" in GB (10^9 B)
  Bytes kv_per_token;  // §7 "KV bf16/token"
};

const Row kTable[] = {
    {"Llama-3.1-8B", 8.03e9, 16.06e9, 128 * KiB},     {"Llama-3.1-70B", 70.6e9, 141e9, 320 * KiB},
    {"Qwen2.5-7B", 7.62e9, 15.2e9, 56 * KiB},         {"Qwen3-30B-A3B", 30.5e9, 61e9, 96 * KiB},
    {"DeepSeek-V3", 671e9, 1.34e12, 576 * 61 * 2},    {"Mixtral-8x7B", 46.7e9, 93.4e9, 128 * KiB},
};

}  // namespace

TEST_CASE("catalogue models give the documented parameter counts, bf16 bytes and KV per token") {
  for (const auto& row : kTable) {
    INFO(row.name);
    ModelConfig c = unquantized(catalogue_model(row.name));
    auto params = static_cast<double>(parameter_count(c));
    CHECK(within_half_percent(params, row.params));
    WeightList w = model_weights(c);
    CHECK(w.parameters == parameter_count(c));  // vocabularies are multiples of 64: no padding at TP 1
    // Two bytes per parameter, but for DeepSeek's float32 router bias (256 per MoE layer, 58 layers).
    Bytes fp32_extra = c.architecture == Architecture::deepseek_v3 ? 2 * 256 * 58 : 0;
    CHECK(w.bytes == static_cast<Bytes>(w.parameters) * 2 + fp32_extra);
    CHECK(within_half_percent(static_cast<double>(w.bytes), row.bf16_bytes));
    for (Engine e : {Engine::vllm, Engine::sglang, Engine::lightllm}) {
      INFO(engine_name(e));
      CHECK(kv_layout(c, e, KvCacheDtype::model).bytes_per_token == row.kv_per_token);
    }
  }
}

TEST_CASE("exact parameter counts of the catalogue models") {
  // Sums of the tensors in weights.cpp; §7 rounds these.
  CHECK(parameter_count(catalogue_model("Llama-3.1-8B")) == 8'030'261'248);
  CHECK(parameter_count(catalogue_model("Llama-3.1-70B")) == 70'553'706'496);
  CHECK(parameter_count(catalogue_model("Qwen2.5-7B")) == 7'615'616'512);
  CHECK(parameter_count(catalogue_model("Qwen3-30B-A3B")) == 30'532'122'624);
  CHECK(parameter_count(catalogue_model("Mixtral-8x7B")) == 46'702'792'704);
  CHECK(parameter_count(catalogue_model("DeepSeek-V3")) == 671'026'419'200);
  // Published: Mistral-7B-v0.3 7,248,023,552 (the 7.25 B of its model card: v0.1's 7,241,732,096
  // with 768 more vocabulary rows in the embedding and the head); DeepSeek-V2-Lite 15.7 B;
  // gpt-oss-20b 21 B ("20.9 B"), MXFP4 values counted unpacked.
  CHECK(parameter_count(catalogue_model("Mistral-7B-v0.3")) == 7'248'023'552);
  CHECK(parameter_count(catalogue_model("DeepSeek-V2-Lite")) == 15'706'484'224);
  CHECK(parameter_count(catalogue_model("gpt-oss-20b")) == 20'914'757'184);
}

TEST_CASE("DeepSeek-V3 counts its MTP module only when asked") {
  // The catalogue keeps num_nextn_predict_layers = 1, but the served model's weights exclude the
  // MTP module (vLLM loads it only as a speculative-decoding draft). With it, the total is the
  // 685 B on the model card (671 B + 14 B, §7).
  ModelConfig c = catalogue_model("DeepSeek-V3");
  CHECK(c.mtp_layers == 1);
  auto main = parameter_count(c);
  auto with_mtp = parameter_count(c, true);
  CHECK(within_half_percent(static_cast<double>(main), 671e9));
  CHECK(within_half_percent(static_cast<double>(with_mtp), 685e9));
  CHECK(with_mtp - main == 13'463'426'304);
}

TEST_CASE("DeepSeek-V3 as shipped: block-FP8 weights of about 0.69 TB with MTP") {
  ModelConfig c = catalogue_model("DeepSeek-R1");
  WeightOptions with_mtp;
  with_mtp.include_mtp = true;
  WeightList w = model_weights(c, with_mtp);
  // §7: "ships FP8 ≈ 0.69 TB": the documented figure has two digits, so ±0.005 TB.
  CHECK(std::abs(static_cast<double>(w.bytes) - 0.69e12) <= 0.005e12);
  // Scales are float32, one per 128 × 128 block, and are not parameters.
  bool saw_scale = false;
  for (const auto& t : w.tensors)
    if (t.is_scale) {
      saw_scale = true;
      CHECK(t.dtype == DType::fp32);
    }
  CHECK(saw_scale);
  CHECK(w.parameters == parameter_count(c, true));
}

TEST_CASE("catalogue lookup ignores case and accepts Hugging Face repository ids") {
  CHECK(catalogue_model("llama-3.1-8b").name == "Llama-3.1-8B");
  CHECK(catalogue_model("meta-llama/Meta-Llama-3.1-70B-Instruct").name == "Llama-3.1-70B");
  CHECK(catalogue_model("deepseek-ai/DeepSeek-R1").name == "DeepSeek-R1");
  CHECK(catalogue_model("QWEN/QWEN2.5-7B-INSTRUCT").max_position == 32768);
  CHECK(catalogue_model("Qwen2.5-7B").max_position == 131072);
  CHECK(catalogue_names().front() == "Llama-3.1-8B");
}

TEST_CASE("unknown catalogue names get a did-you-mean") {
  CHECK_THROWS_WITH(catalogue_model("Llama-3.1-8"),
                    "unknown model 'Llama-3.1-8'; did you mean 'Llama-3.1-8B'? (built-in: Llama-3.1-8B, "
                    "Llama-3.1-70B, Qwen2.5-7B, Qwen2.5-7B-Instruct, Qwen3-30B-A3B, DeepSeek-V3, DeepSeek-R1, "
                    "Mixtral-8x7B, Mistral-7B-v0.3, DeepSeek-V2-Lite, gpt-oss-20b, gemma-2-9b-it, gemma-3-1b-it, "
                    "Llama-4-Scout-17B-16E-Instruct, Llama-4-Maverick-17B-128E-Instruct; or give a config.json)");
  CHECK_THROWS_WITH(catalogue_model("mixtrl-8x7b"),
                    Catch::StartsWith("unknown model 'mixtrl-8x7b'; did you mean 'Mixtral-8x7B'?"));
  CHECK_THROWS_WITH(catalogue_model("gpt-2"), Catch::StartsWith("unknown model 'gpt-2' (built-in: "));
}
