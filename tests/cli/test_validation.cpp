// Public OOM reports reproduced (scenarios/validation/, docs/validation.md): each report's figures
// against headroom's prediction for the same deployment, within the tolerance docs/validation.md
// states for that kind of figure. Reports headroom misses are listed there and not asserted here.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/test_data.hpp"

using headroom::test::q;
using headroom::test::run_headroom;
namespace fs = std::filesystem;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

fs::path validation_scenario(const std::string& name) {
  return fs::path(HEADROOM_SOURCE_DIR) / "scenarios" / "validation" / (name + ".yaml");
}

// summary.json of `headroom run` on one validation scenario (start-up and one request at most).
nlohmann::json validation_summary(const std::string& name) {
  const fs::path out = headroom::test::temp_dir("validation-" + name);
  auto r = run_headroom("run " + q(validation_scenario(name)) + " --no-progress -o " + q(out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(out / "summary.json");
  return nlohmann::json::parse(in);
}

double gib(const nlohmann::json& bytes) { return bytes.get<double>() / kGiB; }

// The tolerances of docs/validation.md, "Tolerances".
// (a) a size the engine computes from its configuration: exact to PyTorch's printed two decimals.
bool same_printed_size(double predicted_gib, double reported_gib) {
  return std::abs(predicted_gib - reported_gib) <= 0.005;
}
// (b) free memory at a point of start-up: within 0.5 GiB (memory outside PyTorch).
bool within_residual(double predicted_gib, double reported_gib) {
  return std::abs(predicted_gib - reported_gib) <= 0.5;
}
// (c) KV capacity: within 5 % (memory outside PyTorch and the profile's activation peak).
bool within_kv(double predicted, double reported) { return std::abs(predicted - reported) <= 0.05 * reported; }
// (d) weights: within 1 % (tensor shapes from config.json).
bool within_weights(double predicted, double reported) { return std::abs(predicted - reported) <= 0.01 * reported; }
// What vLLM's "model weights take" / "Model loading took" counts: the allocated growth while loading,
// the rotary cache its attention builds among the weights included (serving-memory-model.md §10).
double vllm_loaded_gib(const nlohmann::json& bytes) {
  return gib(bytes["weights"]) + gib(bytes["rotary_cache"]);
}

}  // namespace

TEST_CASE("validation: sglang#20890, the aiter workspace on a shared MI325X fails start-up with 16.25 GiB") {
  const nlohmann::json s = validation_summary("sglang-20890-aiter-workspace-mi325x");
  REQUIRE_FALSE(s["startup"]["ok"].get<bool>());
  CHECK(s["startup"]["stage"] == "attention workspace");
  // The fitted input (other processes' memory) gives the logged KV pool exactly.
  CHECK(s["startup"]["kv_tokens"] == 25432);
  INFO(s["oom"].dump());
  CHECK(same_printed_size(gib(s["oom"]["tried_bytes"]), 16.25));  // "Tried to allocate 16.25 GiB"
  CHECK(within_residual(gib(s["oom"]["free_bytes"]), 4.23));     // "of which 4.23 GiB is free"
}

TEST_CASE("validation: sglang#18262, a 5-layer Qwen3 MoE on an MI355X sizes its KV pool as SGLang did") {
  const nlohmann::json s = validation_summary("sglang-18262-aiter-5-layer-mi355x");
  REQUIRE_FALSE(s["startup"]["ok"].get<bool>());
  CHECK(s["startup"]["stage"] == "attention workspace");
  // "KV Cache is allocated. #tokens: 21985288"
  const double tokens = s["startup"]["kv_tokens"].get<double>();
  INFO("predicted " << tokens);
  CHECK(within_kv(tokens, 21985288.0));
}

TEST_CASE("validation: sglang#18262 (July), Qwen3-30B-A3B FP8 on an MI355X leaves the memory SGLang logged") {
  const nlohmann::json s = validation_summary("sglang-18262-aiter-fp8-mi355x");
  REQUIRE_FALSE(s["startup"]["ok"].get<bool>());
  CHECK(s["startup"]["stage"] == "attention workspace");
  // "Memory pool end. avail mem=60.65 GB": nothing is allocated between the pool and the workspace.
  INFO(s["oom"].dump());
  CHECK(within_residual(gib(s["oom"]["free_bytes"]), 60.65));
  // Its KV pool (2,227,073 tokens logged) is a near-miss: docs/validation.md.
}

TEST_CASE("validation: vllm#2031, Llama-2-7B on an A100 gets the blocks vLLM's fixed profiling gave") {
  const nlohmann::json s = validation_summary("vllm-2031-llama2-7b-a100");
  REQUIRE(s["startup"]["ok"].get<bool>());
  // "Llama2-7B with TP=1 and 1xA100-80GB ... This PR: # GPU blocks: 7351"
  const double blocks = s["startup"]["kv_blocks"].get<double>();
  INFO("predicted " << blocks);
  CHECK(within_kv(blocks, 7351.0));
}

TEST_CASE("validation: vllm#10511, Meta-Llama-3-8B on an H100 under V0's accounting") {
  const nlohmann::json s = validation_summary("vllm-10511-llama3-8b-h100-v0");
  REQUIRE(s["startup"]["ok"].get<bool>());
  const nlohmann::json& bytes = s["startup"]["bytes"];
  INFO(bytes.dump());
  CHECK(within_weights(vllm_loaded_gib(bytes), 14.96));   // "model weights take 14.96GiB"
  CHECK(within_kv(gib(bytes["kv_cache"]), 53.29));       // "available_kv_cache_memory 53.29GiB"
}

TEST_CASE("validation: vllm#10511 at -tp 2, each rank loads half the weights and profiles the sampler's sort") {
  const nlohmann::json s = validation_summary("vllm-10511-llama3-8b-h100-v0-tp2");
  REQUIRE(s["startup"]["ok"].get<bool>());
  const nlohmann::json& bytes = s["startup"]["bytes"];
  INFO(bytes.dump());
  CHECK(within_weights(vllm_loaded_gib(bytes), 7.48));  // "model weights take 7.48GiB"
  // Its KV (58.97 GiB by V0's rule) is a near-miss on the non-PyTorch memory: docs/validation.md.
}

TEST_CASE("validation: vllm#17469, Qwen3-30B-A3B at TP4 loads its weights, and its 67 graph execs do not run it out") {
  // "Model loading took 14.2474 GiB" per rank. The report ran out of memory in CUDA-graph capture;
  // headroom charges each of the 67 sizes 48 layers × 0.1875 MiB of driver memory (vllm#23184) and
  // still starts with memory to spare: a miss (docs/validation.md).
  const nlohmann::json s = validation_summary("vllm-17469-qwen3-30b-a3b-tp4-a10");
  INFO(s["startup"].dump());
  CHECK(within_weights(vllm_loaded_gib(s["startup"]["bytes"]), 14.2474));
  CHECK(s["startup"]["ok"].get<bool>());
  CHECK(s["startup"]["bytes"]["graph_execs"].get<double>() == 67.0 * 48 * 196608);  // 603 MiB
  CHECK(gib(s["startup"]["bytes"]["device_free"]) > 1.5);
}

TEST_CASE("validation: LightLLM#187, llama-7b on a V100 fails on one layer's K tensor under LightLLM 2.0.0") {
  // "Tried to allocate 938.00 MiB (GPU 0; 31.75 GiB total capacity; 30.87 GiB already allocated;
  // 97.94 MiB free; 30.87 GiB reserved in total by PyTorch)"
  const nlohmann::json s = validation_summary("lightllm-187-llama-7b-v100");
  REQUIRE_FALSE(s["startup"]["ok"].get<bool>());
  CHECK(s["startup"]["stage"] == "KV cache allocation");
  INFO(s["oom"].dump());
  CHECK(same_printed_size(s["oom"]["tried_bytes"].get<double>() / (1024.0 * 1024.0), 938.00));  // MiB
  CHECK(same_printed_size(gib(s["oom"]["allocated_bytes"]), 30.87));
  CHECK(within_residual(gib(s["oom"]["free_bytes"]), 97.94 / 1024.0));
}

TEST_CASE("validation: vllm#15105, Qwen2.5-32B-AWQ at TP2 on RTX 3090s budgets the sort the warm-up fails in") {
  // A miss on its stage (docs/validation.md): the real warm-up died on the sort's 1.74 GiB (held as
  // a worked number in tests/model), headroom's start-up passes because vLLM 0.8's profile samples
  // the same 1,024 rows, so the sort's moment, 38 B × 1,024 × 152,064 = 5.51 GiB, is in the
  // activation peak the KV budget keeps free. What the real rank lacked is outside that budget.
  const nlohmann::json s = validation_summary("vllm-15105-qwen2.5-32b-awq-rtx3090-tp2");
  REQUIRE(s["startup"]["ok"].get<bool>());
  const nlohmann::json& bytes = s["startup"]["bytes"];
  INFO(bytes.dump());
  const double sort_moment = 38.0 * 1024 * 152064;
  CHECK(bytes["activations_peak"].get<double>() >= sort_moment);
  CHECK(bytes["activations_peak"].get<double>() <= sort_moment + 0.1 * kGiB);  // + the sampled hidden rows
  CHECK(s["startup"]["max_running_requests"] == 1024);
}

TEST_CASE("validation: the scenarios of the misses run too") {
  // The scenarios above are asserted; the others (docs/validation.md, "Misses") must still
  // load and start, so that their figures in the doc stay reproducible.
  const std::set<std::string> asserted = {"sglang-20890-aiter-workspace-mi325x", "sglang-18262-aiter-5-layer-mi355x",
                                          "sglang-18262-aiter-fp8-mi355x", "vllm-2031-llama2-7b-a100",
                                          "vllm-10511-llama3-8b-h100-v0", "vllm-10511-llama3-8b-h100-v0-tp2",
                                          "vllm-17469-qwen3-30b-a3b-tp4-a10", "vllm-15105-qwen2.5-32b-awq-rtx3090-tp2",
                                          "lightllm-187-llama-7b-v100"};
  int misses = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(HEADROOM_SOURCE_DIR) / "scenarios" / "validation")) {
    if (entry.path().extension() != ".yaml" || asserted.count(entry.path().stem().string()) > 0) continue;
    const nlohmann::json s = validation_summary(entry.path().stem().string());
    CHECK(s["scenario"] == entry.path().stem().string());
    ++misses;
  }
  CHECK(misses == 3);
}
