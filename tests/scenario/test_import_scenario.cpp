// `headroom import`'s scenario (import_scenario.hpp): every recognised flag lands on its knob and the
// scenario reads back as `headroom run` reads it; the model, GPU and workload resolve as documented,
// and the defaults taken from the quickstart are the quickstart's.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/core/shell_words.hpp"
#include "sim/engine/lightllm_config.hpp"
#include "sim/engine/sglang_config.hpp"
#include "sim/engine/vllm_config.hpp"
#include "sim/scenario/import_scenario.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::scenario;
namespace fs = std::filesystem;

namespace {

ImportInputs inputs(const std::string& line) {
  ImportInputs in;
  in.words = shell_words(line, "test");
  in.what = "cmd";
  return in;
}

Scenario read_back(const ImportedScenario& s) { return parse_scenario(s.yaml, "imported.yaml", fs::current_path()); }

std::string error_of(const ImportInputs& in) {
  try {
    import_scenario(in);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("import: a vllm serve line becomes a scenario whose knobs are the flags' values") {
  const ImportedScenario s = import_scenario(inputs(
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2 "
      "--gpu-memory-utilization 0.85 --max-num-seqs 128 --max_num_batched_tokens=4096 --no-enable-prefix-caching "
      "--port 8000"));
  CHECK(s.name == "vllm-Llama-3.1-8B");
  const Scenario sc = read_back(s);
  CHECK(sc.name == "vllm-Llama-3.1-8B");
  CHECK(sc.model_name == "meta-llama/Llama-3.1-8B");
  CHECK(sc.tp == 2);
  CHECK(sc.gpu_name == "h100-sxm-80gb");
  CHECK(sc.allocator.expandable_segments);
  const auto& v = std::get<engine::VllmConfig>(sc.engine);
  CHECK(v.gpu_memory_utilization == 0.85);
  CHECK(v.max_num_seqs == 128);
  CHECK(v.max_num_batched_tokens == 4096);
  CHECK_FALSE(v.enable_prefix_caching);
  CHECK_FALSE(v.block_size);  // not on the command line: the engine's default
  // Where each part came from, in the file and for the terminal.
  CHECK_THAT(s.yaml, Catch::Contains("#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve "
                                     "meta-llama/Llama-3.1-8B --tensor-parallel-size 2"));
  // Lists wrap at 100 columns.
  CHECK_THAT(s.yaml, Catch::Contains("# Flags read into engine knobs: --gpu-memory-utilization, --max-num-seqs, "
                                     "--max-num-batched-tokens,\n#   --enable-prefix-caching\n"));
  CHECK_THAT(s.yaml, Catch::Contains("# Ignored (no effect on GPU memory or step time): --port"));
  CHECK_THAT(s.yaml, Catch::Contains("# Workload: the quickstart's synthetic workload (no --workload given)"));
  CHECK(s.notes == std::vector<std::string>{"gpu: the quickstart's h100-sxm-80gb (no --gpu given)",
                                            "workload: the quickstart's synthetic workload (no --workload given)",
                                            "ignored: --port"});
}

TEST_CASE("import: SGLang and LightLLM lines, with --gpu and a trace as --workload") {
  const fs::path dir = test::temp_dir("import-trace");
  test::write(dir / "t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n");
  ImportInputs in = inputs(
      "python -m sglang.launch_server --model-path Llama-3.1-8B --mem-fraction-static 0.8 --cuda-graph-bs 1 2 4 8 "
      "--chunked-prefill-size -1");
  in.gpu = "h200-141gb";
  in.workload = (dir / "t.csv").string();
  const Scenario sc = read_back(import_scenario(in));
  CHECK(sc.gpu_name == "h200-141gb");
  CHECK(sc.workload.trace);
  const auto& g = std::get<engine::SglangConfig>(sc.engine);
  CHECK(g.mem_fraction_static == 0.8);
  CHECK(g.cuda_graph_bs == std::vector<int>{1, 2, 4, 8});
  CHECK(g.chunked_prefill_size == -1);

  const Scenario l = read_back(import_scenario(inputs(
      "python3 -m lightllm.server.api_server --model_dir Llama-3.1-8B --mem_fraction 0.8 --running_max_req_size 64 "
      "--disable_cudagraph")));
  const auto& c = std::get<engine::LightllmConfig>(l.engine);
  CHECK(c.mem_fraction == 0.8);
  CHECK(c.running_max_req_size == 64);
  CHECK(c.disable_cudagraph);
  fs::remove_all(dir);
}

TEST_CASE("import: without --workload the workload is the quickstart's, key for key") {
  const YAML::Node quickstart = YAML::LoadFile(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/quickstart.yaml");
  const YAML::Node ours = YAML::Load(quickstart_workload_yaml());
  CHECK(YAML::Dump(ours) == YAML::Dump(quickstart["workload"]));
  CHECK(quickstart["gpu"]["profile"].as<std::string>() == "h100-sxm-80gb");
}

TEST_CASE("import: a local model folder and a workload YAML's relative paths become absolute") {
  const fs::path dir = test::temp_dir("import-local");
  fs::create_directories(dir / "model");
  fs::copy_file(std::string(HEADROOM_SOURCE_DIR) + "/tests/model/configs/meta-llama/Llama-3.1-8B/config.json", dir / "model/config.json");
  test::write(dir / "w.yaml", "workload:\n  trace: {path: t.csv}\n");
  test::write(dir / "t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n");
  ImportInputs in = inputs("vllm serve " + (dir / "model/").string());
  in.workload = (dir / "w.yaml").string();
  const ImportedScenario s = import_scenario(in);
  CHECK(s.name == "vllm-model");
  const YAML::Node y = YAML::Load(s.yaml);
  CHECK(y["model"]["name"].as<std::string>() == (dir / "model").string());
  CHECK(y["workload"]["trace"]["path"].as<std::string>() == (dir / "t.csv").string());
  CHECK(s.notes == std::vector<std::string>{"gpu: the quickstart's h100-sxm-80gb (no --gpu given)"});
  fs::remove_all(dir);
}

TEST_CASE("import: a model, GPU or workload it cannot use is an error naming the flag") {
  CHECK(error_of(inputs("vllm serve Llama-3.1-8b-typo")) ==
        "cmd: MODEL 'Llama-3.1-8b-typo' is neither a local folder nor a model headroom knows: unknown model "
        "'Llama-3.1-8b-typo'; did you mean 'Llama-3.1-8B'? (built-in: " +
            error_of(inputs("vllm serve x")).substr(error_of(inputs("vllm serve x")).find("(built-in: ") + 11));
  const fs::path dir = test::temp_dir("import-bad");
  fs::create_directories(dir / "empty");
  CHECK(error_of(inputs("python -m sglang.launch_server --model-path " + (dir / "empty").string())) ==
        "cmd: --model-path '" + (dir / "empty").string() +
            "': the folder holds no config.json (headroom reads the model's architecture from it)");
  ImportInputs gpu = inputs("vllm serve Llama-3.1-8B");
  gpu.gpu = "h100-typo";
  CHECK_THAT(error_of(gpu), Catch::StartsWith("--gpu: unknown GPU profile 'h100-typo'"));
  ImportInputs w = inputs("vllm serve Llama-3.1-8B");
  w.workload = (dir / "none.csv").string();
  CHECK(error_of(w) == "--workload: " + (dir / "none.csv").string() + ": no such file");
  test::write(dir / "w.yaml", "requests: 3\n");
  w.workload = (dir / "w.yaml").string();
  CHECK(error_of(w) == (dir / "w.yaml").string() +
                           ": expected a workload (a mapping with 'trace' or 'synthetic', docs/scenario.md) or a "
                           "scenario holding one");
  // A rule across knobs, as `headroom run` checks it, names the scenario's key.
  CHECK_THAT(error_of(inputs("vllm serve Llama-3.1-8B --max-model-len 1000000")),
             Catch::StartsWith("cmd:") && Catch::Contains("key 'engine.max_model_len': vllm max_model_len: 1000000 is above"));
  fs::remove_all(dir);
}

TEST_CASE("import: parallel flags become the scenario's parallel section, vLLM's EP spanning tp × dp") {
  const Scenario v = read_back(import_scenario(
      inputs("vllm serve Qwen/Qwen3-30B-A3B -tp 2 -dp 2 --enable-expert-parallel --disable-custom-all-reduce")));
  CHECK(v.tp == 2);
  CHECK(v.parallel.dp == 2);
  CHECK(v.parallel.ep == 4);
  CHECK_FALSE(v.parallel.custom_all_reduce);
  CHECK(v.parallel.pp == 1);
  const Scenario g = read_back(import_scenario(inputs(
      "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --tp 4 --dp 2 --enable-dp-attention --ep-size 2")));
  CHECK(g.parallel.dp == 2);
  CHECK(g.parallel.dp_attention);
  CHECK(g.parallel.ep == 2);
  const Scenario p = read_back(import_scenario(inputs("vllm serve meta-llama/Llama-3.1-8B -pp 2")));
  CHECK(p.parallel.pp == 2);
  CHECK_THAT(error_of(inputs("python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --tp 4 --ep-size 3")),
             Catch::Contains("key 'parallel.ep': sglang --ep-size (3) must divide the tensor parallel size (4)"));
}
