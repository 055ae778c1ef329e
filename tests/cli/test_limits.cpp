// Limits as a user meets them (docs/limits.md): a KV cache too large to simulate is refused before
// "start-up ok" is printed, naming the scenario's line; running out of memory on an input within
// the limits says what was being done, with exit code 2 and nothing written.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/support/sanitizers.hpp"
#include "tests/support/test_data.hpp"

using headroom::test::q;
using headroom::test::run_headroom;
using headroom::test::run_shell;
using headroom::test::write;
namespace fs = std::filesystem;

namespace {

// A one-layer model with 8-wide heads: 32 bytes of KV per token, so an 80 GB GPU holds 10^8 blocks.
const std::string kTinyModel = R"({
  "model_type": "llama", "num_hidden_layers": 1, "hidden_size": 64, "intermediate_size": 128,
  "num_attention_heads": 8, "num_key_value_heads": 1, "vocab_size": 256,
  "max_position_embeddings": 4096, "torch_dtype": "bfloat16"
})";

std::string scenario(const std::string& engine) {
  return "name: tiny\n"
         "gpu: {profile: h100-sxm-80gb}\n"
         "model: {name: ./tiny/config.json}\n"
         "engine:\n"
         "  kind: vllm\n" +
         engine +
         "workload:\n"
         "  synthetic: {requests: 5, arrivals: {process: poisson, rate: 10}, input: {dist: fixed, value: 10}, "
         "output: {dist: fixed, value: 4}}\n";
}

}  // namespace

TEST_CASE("limits: KV blocks the GPU's memory would give beyond the limit are refused before start-up ok") {
  const fs::path dir = headroom::test::temp_dir("limits-kv");
  fs::create_directories(dir / "tiny");
  write(dir / "tiny" / "config.json", kTinyModel);
  write(dir / "s.yaml", scenario(""));
  auto r = run_headroom("run " + q(dir / "s.yaml") + " --no-progress -o " + q(dir / "out"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("s.yaml:5:3: key 'engine.block_size': vllm: the KV cache would hold") &&
                           Catch::Contains("above the limit of 16777216 (docs/limits.md)"));
  CHECK_THAT(r.output, !Catch::Contains("start-up"));
  CHECK_FALSE(fs::exists(dir / "out" / "summary.json"));
  // A larger block brings it within the limit.
  write(dir / "s.yaml", scenario("  block_size: 4096\n  max_model_len: 4096\n"));
  r = run_headroom("run " + q(dir / "s.yaml") + " --no-progress -o " + q(dir / "out"));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("start-up         ok"));
  fs::remove_all(dir);
}

TEST_CASE("limits: out of memory on an input within the limits names what was being done") {
  if (headroom::test::kSanitized) return;  // the sanitizers reserve terabytes of address space: a ulimit -v stops them first
  const fs::path dir = headroom::test::temp_dir("limits-oom");
  // 20 million empty lists: within the value limit, ~500 MB of tree.
  write(dir / "lists.pickle", std::string("\x80\x04", 2) + std::string(20'000'000, ']') + ".");
  auto r = run_shell("ulimit -v 300000 && " + q(headroom::test::headroom_binary()) + " replay " +
                     q(dir / "lists.pickle") + " -o " + q(dir / "out"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("headroom: error: out of memory while reading the snapshot") &&
                           Catch::Contains("lists.pickle"));
  CHECK_THAT(r.output, !Catch::Contains("internal error"));
  CHECK_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}
