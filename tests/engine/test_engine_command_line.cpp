// A server's command line read against the engines' flag tables (engine_command_line.hpp,
// <engine>_flags.cpp): each launcher, both spellings, --flag=value, --no-flag, lists, aliases,
// environment variables, and the exact error for each kind of bad input.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/core/shell_words.hpp"
#include "sim/engine/engine_command_line.hpp"
#include "sim/engine/engine_registry.hpp"

using namespace headroom;
using namespace headroom::engine;

namespace {

ImportedCommandLine read(const std::string& line) {
  const std::vector<std::string> words = shell_words(line, "test");
  return read_engine_command_line(words, "cmd");
}

std::string error_of(const std::string& line) {
  try {
    read(line);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// knob → its value(s), space-joined.
std::map<std::string, std::string> knobs(const ImportedCommandLine& c) {
  std::map<std::string, std::string> out;
  for (const KnobSetting& k : c.knobs) {
    std::string v;
    for (const std::string& x : k.values) v += (v.empty() ? "" : " ") + x;
    out[k.key] = k.list ? "[" + v + "]" : v;
  }
  return out;
}

}  // namespace

TEST_CASE("vllm serve: positional model, both spellings, =, --no-, lists, aliases, suffixes, variables") {
  const ImportedCommandLine c = read(
      "VLLM_ATTENTION_BACKEND=FLASHINFER PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True HF_TOKEN=secret "
      "/opt/venv/bin/vllm serve meta-llama/Llama-3.1-8B -tp 2 --gpu_memory_utilization=0.85 "
      "--max-num-seqs 128 --max-num-batched-tokens 16k --max-model-len 32K --no-enable-prefix-caching "
      "--cudagraph-capture-sizes 1 2 4 8 --kv-cache-dtype fp8_e5m2 --port 8000 --api-key sk-x --host 0.0.0.0 "
      "--dtype auto --max-num-seqs=256 --disable-log-requests");
  CHECK(c.engine->name == "vllm");
  CHECK(c.launcher == "vllm serve");
  CHECK(c.model == "meta-llama/Llama-3.1-8B");
  CHECK(c.model_flag == "MODEL");
  CHECK(c.tp == 2);
  CHECK(knobs(c) == std::map<std::string, std::string>{{"gpu_memory_utilization", "0.85"},
                                                        {"max_num_seqs", "256"},  // the last one wins
                                                        {"max_num_batched_tokens", "16000"},
                                                        {"max_model_len", "32768"},
                                                        {"enable_prefix_caching", "false"},
                                                        {"cudagraph_capture_sizes", "[1 2 4 8]"},
                                                        {"kv_cache_dtype", "fp8"},
                                                        {"attention_backend", "FLASHINFER"}});
  CHECK(c.allocator == "expandable_segments:True");
  CHECK(shell_join(c.shown) ==
        "VLLM_ATTENTION_BACKEND=FLASHINFER PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True HF_TOKEN=... "
        "/opt/venv/bin/vllm serve meta-llama/Llama-3.1-8B -tp 2 --gpu_memory_utilization=0.85 --max-num-seqs 128 "
        "--max-num-batched-tokens 16k --max-model-len 32K --no-enable-prefix-caching --cudagraph-capture-sizes 1 2 4 8 "
        "--kv-cache-dtype fp8_e5m2 --port ... --api-key ... --host ... --dtype auto --max-num-seqs=256 "
        "--disable-log-requests");
  // Names only, never values (an API key or a token is a secret); --dtype auto changes nothing.
  CHECK(c.ignored == std::vector<std::string>{"--port", "--api-key", "--host", "--dtype", "--disable-log-requests",
                                              "HF_TOKEN"});
}

TEST_CASE("python -m vllm.entrypoints.openai.api_server takes the model from --model") {
  const ImportedCommandLine c =
      read("VLLM_USE_FLASHINFER_SAMPLER=1 python3.12 -m vllm.entrypoints.openai.api_server --model "
           "Qwen/Qwen2.5-7B-Instruct --enforce-eager --kv-cache-memory-bytes 20G --num-gpu-blocks-override=4096");
  CHECK(c.engine->name == "vllm");
  CHECK(c.model == "Qwen/Qwen2.5-7B-Instruct");
  CHECK(c.model_flag == "--model");
  CHECK(knobs(c) == std::map<std::string, std::string>{
                        {"enforce_eager", "true"}, {"kv_cache_memory_bytes", "21474836480"},
                        {"num_gpu_blocks_override", "4096"}, {"sampler", "flashinfer"}});
  CHECK_FALSE(c.tp);
}

TEST_CASE("vllm serve --disable-hybrid-kv-cache-manager is the knob that sizes windowed layers as full ones") {
  const ImportedCommandLine c = read("vllm serve openai/gpt-oss-20b --disable-hybrid-kv-cache-manager");
  CHECK(knobs(c) == std::map<std::string, std::string>{{"disable_hybrid_kv_cache_manager", "true"}});
  CHECK(knobs(read("vllm serve openai/gpt-oss-20b --no-disable-hybrid-kv-cache-manager")) ==
        std::map<std::string, std::string>{{"disable_hybrid_kv_cache_manager", "false"}});
}

TEST_CASE("python -m sglang.launch_server: --model-path, --tp, lists, switches, a negative value, mapped choices") {
  const ImportedCommandLine c = read(
      "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --tp 8 --mem_fraction_static 0.8 "
      "--chunked-prefill-size -1 --cuda-graph-bs 1 2 4 --disable-cuda-graph --sampling-backend pytorch "
      "--attention-backend=flashinfer --schedule-conservativeness 1.3 --trust-remote-code --log-level info");
  CHECK(c.engine->name == "sglang");
  CHECK(c.model == "deepseek-ai/DeepSeek-R1");
  CHECK(c.model_flag == "--model-path");
  CHECK(c.tp == 8);
  CHECK(knobs(c) == std::map<std::string, std::string>{{"mem_fraction_static", "0.8"},
                                                        {"chunked_prefill_size", "-1"},
                                                        {"cuda_graph_bs", "[1 2 4]"},
                                                        {"disable_cuda_graph", "true"},
                                                        {"sampling_backend", "native"},
                                                        {"attention_backend", "flashinfer"},
                                                        {"schedule_conservativeness", "1.3"}});
  CHECK(c.ignored == std::vector<std::string>{"--trust-remote-code", "--log-level"});
}

TEST_CASE("python -m lightllm.server.api_server: underscores as LightLLM spells them, or dashes") {
  const ImportedCommandLine c = read(
      "DISABLE_CHECK_MAX_LEN_INFER=1 python -m lightllm.server.api_server --model_dir /models/llama --tp 1 "
      "--mem-fraction 0.85 --max_total_token_num 120000 --running_max_req_size 512 --disable_chunked_prefill "
      "--graph_max_batch_size=128 --host 0.0.0.0 --port 8080");
  CHECK(c.engine->name == "lightllm");
  CHECK(c.model == "/models/llama");
  CHECK(c.model_flag == "--model_dir");
  CHECK(knobs(c) == std::map<std::string, std::string>{{"mem_fraction", "0.85"},
                                                        {"max_total_token_num", "120000"},
                                                        {"running_max_req_size", "512"},
                                                        {"disable_chunked_prefill", "true"},
                                                        {"graph_max_batch_size", "128"},
                                                        {"disable_check_max_len_infer", "true"}});
}

TEST_CASE("parallel flags: each engine's spelling into the scenario's parallel keys") {
  auto parallel_of = [](const ImportedCommandLine& c) {
    std::map<std::string, std::string> out;
    for (const KnobSetting& k : c.parallel) out[k.key] = k.values.front();
    return out;
  };
  ImportedCommandLine v = read("vllm serve m -tp 2 -pp 3 --data-parallel-size=2 --enable-expert-parallel "
                               "--disable-custom-all-reduce");
  CHECK(*v.tp == 2);
  CHECK(parallel_of(v) ==
        std::map<std::string, std::string>{{"pp", "3"}, {"dp", "2"}, {"ep", "true"}, {"custom_all_reduce", "false"}});
  CHECK(parallel_of(read("vllm serve m --pipeline-parallel-size 2 -dp 4 --no-enable-expert-parallel")) ==
        std::map<std::string, std::string>{{"pp", "2"}, {"dp", "4"}, {"ep", "false"}});
  ImportedCommandLine g = read("python -m sglang.launch_server --model-path m --tp 8 --dp 8 --enable-dp-attention "
                               "--ep-size 8 --pp-size 2 --disable-custom-all-reduce");
  CHECK(parallel_of(g) == std::map<std::string, std::string>{{"dp", "8"},
                                                             {"dp_attention", "true"},
                                                             {"ep", "8"},
                                                             {"pp", "2"},
                                                             {"custom_all_reduce", "false"}});
  CHECK(parallel_of(read("python -m sglang.launch_server --model-path m --data-parallel-size 2 --expert-parallel-size 2 "
                         "--pipeline-parallel-size 2")) ==
        std::map<std::string, std::string>{{"dp", "2"}, {"ep", "2"}, {"pp", "2"}});
  ImportedCommandLine l = read("python -m lightllm.server.api_server --model_dir m --tp 8 --dp 8 --disable_custom_allreduce");
  CHECK(parallel_of(l) == std::map<std::string, std::string>{{"dp", "8"}, {"custom_all_reduce", "false"}});
  CHECK(error_of("vllm serve m -pp 0") == "cmd: --pipeline-parallel-size '0': expected a whole number of at least 1");
  CHECK(error_of("python -m sglang.launch_server --model-path m --ep-size x") ==
        "cmd: --ep-size 'x': expected a whole number of at least 1");
  CHECK(error_of("vllm serve m --enable-expert-parallel=1") ==
        "cmd: --enable-expert-parallel takes no value, got '1' (write --enable-expert-parallel or "
        "--no-enable-expert-parallel)");
}

TEST_CASE("vLLM's human_readable_int: decimal and binary suffixes, as vllm/engine/arg_utils.py reads them") {
  CHECK(human_readable_int("8192") == 8192);
  CHECK(human_readable_int("1k") == 1000);
  CHECK(human_readable_int("1K") == 1024);
  CHECK(human_readable_int("25.6k") == 25600);
  CHECK(human_readable_int("2m") == 2000000);
  CHECK(human_readable_int("2M") == 2097152);
  CHECK(human_readable_int("2G") == 2147483648LL);
  CHECK(human_readable_int("0.5g") == 500000000);
  CHECK_FALSE(human_readable_int("1.5K"));  // decimals only with decimal suffixes
  CHECK_FALSE(human_readable_int("1T"));
  CHECK_FALSE(human_readable_int("k"));
  CHECK_FALSE(human_readable_int("-1"));
  CHECK_FALSE(human_readable_int("12x"));
  CHECK_FALSE(human_readable_int("99999999999G"));  // overflow
}

TEST_CASE("engine command lines: each kind of bad input has its exact error") {
  CHECK(error_of("") ==
        "cmd: empty; expected a server command line (vllm serve, python -m vllm.entrypoints.openai.api_server, "
        "python -m sglang.launch_server, python -m lightllm.server.api_server)");
  CHECK(error_of("python -m vllm.entrypoints.api_server --model m") ==
        "cmd: 'python -m vllm.entrypoints.api_server' does not start a server headroom models; expected one of: vllm "
        "serve, python -m vllm.entrypoints.openai.api_server, python -m sglang.launch_server, python -m "
        "lightllm.server.api_server");
  CHECK(error_of("trtllm-serve m") ==
        "cmd: 'trtllm-serve m' does not start a server headroom models; expected one of: vllm serve, python -m "
        "vllm.entrypoints.openai.api_server, python -m sglang.launch_server, python -m lightllm.server.api_server");
  CHECK(error_of("vllm serve Llama-3.1-8B --gpu-memory-utilisation 0.9 --frobnicate") ==
        "cmd: --gpu-memory-utilisation (did you mean --gpu-memory-utilization?), --frobnicate are not flags of vllm "
        "serve as vllm-project/vllm vllm/engine/arg_utils.py at commit 99d7eb5 (v0.11 series) defines them");
  CHECK(error_of("vllm serve Llama-3.1-8B --quantization awq --enable-lora -dcp 2 -q awq") ==
        "cmd: --quantization (quantised weights and kernels), --enable-lora (LoRA adapter slots), "
        "--decode-context-parallel-size (decode context parallelism) change memory in ways headroom does not model; "
        "remove them to simulate the rest (docs/import.md#vllm)");
  CHECK(error_of("vllm serve Llama-3.1-8B -O3") ==
        "cmd: --compilation-config (the compilation and CUDA graph set-up; set cudagraph_mode or "
        "cudagraph_capture_sizes in the scenario instead) changes memory in ways headroom does not model; remove it to "
        "simulate the rest (docs/import.md#vllm)");
  CHECK(error_of("python -m sglang.launch_server --model-path m --frob 1 --enable-dp-lm-head") ==
        "cmd: --frob is not a flag of python -m sglang.launch_server as sgl-project/sglang "
        "python/sglang/srt/server_args.py at commit 001067f (main) defines them; --enable-dp-lm-head (data-parallel "
        "attention) changes memory in ways headroom does not model; remove it to simulate the rest "
        "(docs/import.md#sglang)");
  CHECK(error_of("vllm serve m --max-num-seqs 0") == "cmd: --max-num-seqs '0': expected a whole number of at least 1");
  CHECK(error_of("vllm serve m --max-num-seqs 1.5") ==
        "cmd: --max-num-seqs '1.5': expected a whole number of at least 1");
  CHECK(error_of("vllm serve m --max-model-len 1.5K") ==
        "cmd: --max-model-len '1.5K': expected a whole number of at least 1 (e.g. 8192, 32k, 1G)");
  CHECK(error_of("vllm serve m --gpu-memory-utilization 1.2") ==
        "cmd: --gpu-memory-utilization '1.2': expected a fraction in (0, 1]");
  CHECK(error_of("vllm serve m --gpu-memory-utilization nan") ==
        "cmd: --gpu-memory-utilization 'nan': expected a fraction in (0, 1]");
  CHECK(error_of("python -m sglang.launch_server --model-path m --schedule-conservativeness 0") ==
        "cmd: --schedule-conservativeness '0': expected a number above 0");
  CHECK(error_of("vllm serve m --kv-cache-dtype fp8_inc") ==
        "cmd: --kv-cache-dtype 'fp8_inc': expected one of auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_ds_mla (the "
        "values headroom models)");
  CHECK(error_of("VLLM_ATTENTION_BACKEND=XFORMERS vllm serve m") ==
        "cmd: VLLM_ATTENTION_BACKEND 'XFORMERS': expected one of FLASH_ATTN, FLASHINFER, FLASHMLA, CUTLASS_MLA, "
        "TRITON_MLA (the values headroom models)");
  CHECK(error_of("python -m sglang.launch_server --model-path m --cuda-graph-bs 1 x") ==
        "cmd: --cuda-graph-bs 'x': expected a whole number of at least 1");
  CHECK(error_of("python -m sglang.launch_server --model-path m --cuda-graph-bs 1 0") ==
        "cmd: --cuda-graph-bs '0': expected a whole number of at least 1");
  CHECK(error_of("vllm serve m --enforce-eager=true") ==
        "cmd: --enforce-eager takes no value, got 'true' (write --enforce-eager or --no-enforce-eager)");
  CHECK(error_of("python -m sglang.launch_server --model-path m --disable-cuda-graph=1") ==
        "cmd: --disable-cuda-graph takes no value, got '1'");
  CHECK(error_of("vllm serve m --max-num-seqs --enforce-eager") ==
        "cmd: --max-num-seqs expects a value, got '--enforce-eager'");
  CHECK(error_of("vllm serve m --max-num-seqs") == "cmd: --max-num-seqs expects a value, got none");
  CHECK(error_of("vllm serve m extra") == "cmd: unexpected argument 'extra' after 'm' (a value with spaces needs quotes)");
  CHECK(error_of("vllm serve --port 8000") == "cmd: no model; give vllm serve MODEL or --model MODEL");
  CHECK(error_of("python -m lightllm.server.api_server --tp 2") ==
        "cmd: no model; give python -m lightllm.server.api_server --model_dir MODEL");
  CHECK(error_of("vllm serve m -tp 0") == "cmd: --tensor-parallel-size '0': expected a whole number of at least 1");
}

TEST_CASE("every flag table is consistent: unique spellings, knobs the engine reads, its fraction flag") {
  for (const EngineTraits* t : engines()) {
    INFO(t->name);
    REQUIRE(t->command_line);
    const EngineCommandLine& c = t->command_line();
    CHECK(!c.launchers.empty());
    CHECK(!c.parser_source.empty());
    CHECK(c.docs_anchor == "docs/import.md#" + std::string(t->name));
    std::set<std::string> spellings;
    bool fraction_flag = false, model = false, tp = false;
    for (const EngineFlag& f : c.flags) {
      std::string names(f.names);
      for (std::size_t i = 0; i < names.size();) {
        const std::size_t j = std::min(names.find(' ', i), names.size());
        std::string n = names.substr(i, j - i);
        if (n.starts_with("--")) std::replace(n.begin() + 2, n.end(), '_', '-');
        INFO(n);
        CHECK(n.starts_with("-"));
        CHECK(spellings.insert(n).second);  // one flag per spelling
        i = j + 1;
      }
      model |= f.use == FlagUse::model;
      tp |= f.use == FlagUse::tp;
      if (f.use == FlagUse::unmodelled) CHECK(!f.why.empty());
      if (f.use != FlagUse::knob) continue;
      fraction_flag |= f.names.starts_with(t->fraction_flag) && f.target == t->fraction_knob;
      // The engine's own reader takes the knob, with a value of the flag's kind.
      std::string value = "2";
      if (f.value == FlagValue::fraction) value = "0.5";
      if (f.value == FlagValue::boolean) value = "true";
      if (f.value == FlagValue::whole_list) value = "[1, 2]";
      if (f.value == FlagValue::choice) value = std::string(f.values.substr(f.values.find('=') + 1, f.values.find(' ') - f.values.find('=') - 1));
      const YAML::Node node = YAML::Load("{kind: " + std::string(t->name) + ", " + std::string(f.target) + ": " + value + "}");
      INFO(f.names << " -> " << f.target << ": " << value);
      CHECK_NOTHROW(t->read_knobs(YamlSection(node, "table", "engine")));
    }
    CHECK(fraction_flag);
    CHECK(model);
    CHECK(tp);
    for (const EngineEnvVar& e : c.env) {
      std::string value = e.value == FlagValue::boolean ? "true" : std::string(e.values.substr(e.values.find('=') + 1, e.values.find(' ') - e.values.find('=') - 1));
      const YAML::Node node = YAML::Load("{kind: " + std::string(t->name) + ", " + std::string(e.target) + ": " + value + "}");
      INFO(e.name << " -> " << e.target << ": " << value);
      CHECK_NOTHROW(t->read_knobs(YamlSection(node, "table", "engine")));
    }
  }
}

TEST_CASE("each engine names the flags that give a start-up the KV capacity a policy gave it") {
  StartupResult st;
  st.bytes.kv_cache = 56640000000;
  st.kv_blocks = 27008;
  st.kv_tokens = 432128;
  CHECK(find_engine("vllm")->capacity_setting(st) ==
        "--kv-cache-memory-bytes 56640000000 (or --num-gpu-blocks-override 27008)");
  CHECK(find_engine("sglang")->capacity_setting(st) ==
        "--max-total-tokens 432128 (it only lowers the pool --mem-fraction-static sizes)");
  CHECK(find_engine("lightllm")->capacity_setting(st) == "--max_total_token_num 432128");
}
