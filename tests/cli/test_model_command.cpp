// `headroom model`: the report's lines for the worked examples of docs/serving-memory-model.md §4,
// its JSON, and exit code 2 with a message for bad input.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/test_data.hpp"

using headroom::test::run_headroom;

TEST_CASE("headroom model reports Llama-3.1-8B weights, KV per token and the 800 MiB prefill peak") {
  auto r = run_headroom("model Llama-3.1-8B --tokens 8192 --seqs 1024");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("Llama-3.1-8B (llama), tensor parallel 1, vllm layout"));
  CHECK_THAT(r.output, Catch::Contains("  weights          14.96 GiB per rank (8.03 billion parameters on this rank"));
  CHECK_THAT(r.output, Catch::Contains("  KV cache         128.00 KiB per token (4.00 KiB per token and layer, 32 layers"));
  CHECK_THAT(r.output, Catch::Contains("  step             8192 tokens over 1024 sequences: 0 decoding, 8192 prefill tokens"));
  CHECK_THAT(r.output, Catch::Contains("  activation peak  800.00 MiB allocated"));
  CHECK_THAT(r.output, Catch::Contains("(838,860,800 B requested, at layer 0 'act'; flash-attn)"));
  // Inside the stable sort: 38 B × 1024 × 128,256 plus the sampled hidden rows ≈ 4.66 GiB (§4a);
  // 3.44 GiB before the sort's reverse indices (8 B) and cub's alternate buffers (12 B) were
  // modelled, where the peak was after the sort at 28 B.
  CHECK_THAT(r.output, Catch::Contains("  sampler peak     4.66 GiB allocated"));
  CHECK_THAT(r.output, Catch::Contains("  0-31    attention+mlp  128.00 MiB  800.00 MiB  672.00 MiB  act"));
}

TEST_CASE("headroom model shows DeepSeek's dense and MoE layers and the per-layer _decode_out") {
  auto r = run_headroom("model deepseek-ai/DeepSeek-R1 --tokens 256 --seqs 256 --mla-decode-out per-layer");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("step             256 tokens over 256 sequences: 256 decoding, 0 prefill tokens"));
  CHECK_THAT(r.output, Catch::Contains("  persistent       15.25 GiB kept after the step"));
  CHECK_THAT(r.output, Catch::Contains("  0       mla+mlp "));
  CHECK_THAT(r.output, Catch::Contains("  4-60    mla+moe "));

  auto shared = run_headroom("model DeepSeek-R1 --tokens 256 --seqs 256 --mla-decode-out shared");
  REQUIRE(shared.exit_code == 0);
  CHECK_THAT(shared.output, Catch::Contains("  persistent       256.00 MiB kept after the step"));
}

TEST_CASE("headroom model --json carries the byte figures") {
  auto r = run_headroom("model Qwen3-30B-A3B --tokens 8192 --seqs 1 --json");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.output);
  CHECK(j["model"] == "Qwen3-30B-A3B");
  CHECK(j["kv_cache"]["bytes_per_token"] == 98304);
  CHECK(j["forward"]["requested_peak_bytes"] == 472682492);  // ≈56 KiB per token (§4b)
  CHECK(j["layers"].size() == 48);
  CHECK(j["layers"][0]["kind"] == "attention+moe");
  CHECK(j["sampler"]["kind"] == "native");
}

TEST_CASE("headroom model: unknown models and bad numbers exit 2 with the reason") {
  auto unknown = run_headroom("model Llama-3.1-8C");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.output,
             Catch::Contains("headroom: error: unknown model 'Llama-3.1-8C'; did you mean 'Llama-3.1-8B'?"));
  auto zero = run_headroom("model Llama-3.1-8B --tokens 0");
  CHECK(zero.exit_code == 2);
  CHECK_THAT(zero.output, Catch::Contains("headroom: error: --tokens: expected at least 1, got 0"));
  auto too_many = run_headroom("model Llama-3.1-8B --tokens 8 --seqs 16");
  CHECK(too_many.exit_code == 2);
  CHECK_THAT(too_many.output,
             Catch::Contains("headroom: error: --seqs: 16 sequences need at least as many tokens, got --tokens 8"));
  auto not_a_number = run_headroom("model Llama-3.1-8B --tokens lots");
  CHECK(not_a_number.exit_code == 2);
  CHECK_THAT(not_a_number.output, Catch::Contains("--tokens"));
  auto tp = run_headroom("model Llama-3.1-8B --tp 3");
  CHECK(tp.exit_code == 2);
  CHECK_THAT(tp.output, Catch::Contains("total number of attention heads (32) must be divisible by tensor parallel "
                                        "size (3)"));
  auto sampler = run_headroom("model Llama-3.1-8B --sampler topk");
  CHECK(sampler.exit_code == 2);
  CHECK_THAT(sampler.output,
             Catch::Contains("headroom: error: --sampler: expected one of greedy, native, flashinfer, got 'topk'"));
  auto workspace = run_headroom("model Llama-3.1-8B --engine lightllm --attention flashinfer");
  CHECK(workspace.exit_code == 2);
  CHECK_THAT(workspace.output, Catch::Contains("no FlashInfer workspace size is known for lightllm"));
}

TEST_CASE("headroom model: gpt-oss-20b's MXFP4 weights, DeepSeek-V2-Lite's MLA, Mistral-7B-v0.3") {
  auto oss = run_headroom("model openai/gpt-oss-20b --tokens 2048 --seqs 8");
  INFO(oss.output);
  REQUIRE(oss.exit_code == 0);
  CHECK_THAT(oss.output, Catch::Contains("gpt-oss-20b (gpt_oss), tensor parallel 1, vllm layout"));
  // 13,761,264,768 B, the published checkpoint's total_size; KV as full attention on every layer.
  CHECK_THAT(oss.output, Catch::Contains("  weights          12.82 GiB per rank (20.91 billion parameters on this rank"));
  CHECK_THAT(oss.output, Catch::Contains("  KV cache         48.00 KiB per token (2.00 KiB per token and layer, 24 layers"));
  CHECK_THAT(oss.output, Catch::Contains("  sliding window   12 of 24 layers attend to the last 128 tokens"));
  // Gemma 3 1B: 22 of 26 layers slide over 512 tokens; one KV head of 256: 1 KiB per token and layer.
  auto gemma = run_headroom("model google/gemma-3-1b-it --tokens 256 --seqs 4");
  INFO(gemma.output);
  REQUIRE(gemma.exit_code == 0);
  CHECK_THAT(gemma.output, Catch::Contains("gemma-3-1b-it (gemma3_text), tensor parallel 1, vllm layout"));
  CHECK_THAT(gemma.output, Catch::Contains("  KV cache         26.00 KiB per token (1.00 KiB per token and layer, 26 layers"));
  CHECK_THAT(gemma.output, Catch::Contains("  sliding window   22 of 26 layers attend to the last 512 tokens"));

  auto lite = run_headroom("model DeepSeek-V2-Lite --tokens 256 --seqs 256 --json");
  INFO(lite.output);
  REQUIRE(lite.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(lite.output);
  CHECK(j["architecture"] == "deepseek_v2");
  CHECK(j["weights"]["bytes_per_rank"] == 31'412'968'448);  // 15,706,484,224 parameters in bf16
  CHECK(j["kv_cache"]["bytes_per_token"] == 576 * 27 * 2);    // the MLA latent and rope key
  CHECK(j["layers"][0]["kind"] == "mla+mlp");
  CHECK(j["layers"][1]["kind"] == "mla+moe");

  auto mistral = run_headroom("model mistralai/Mistral-7B-v0.3 --tp 2 --json");
  INFO(mistral.output);
  REQUIRE(mistral.exit_code == 0);
  CHECK(nlohmann::json::parse(mistral.output)["weights"]["parameters"] == 7'248'023'552);
}
