// Scenario files: the shipped ones load; engine knobs under each engine's own names; unknown keys
// and bad values are errors naming file, line, column and key, with a did-you-mean.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/sweep_grid.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::scenario;

namespace {
std::string error_of(const std::string& yaml) {
  try {
    parse_scenario(yaml, "x.yaml", "/tmp");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
const std::string kBase =
    "gpu: {profile: h100-sxm-80gb}\n"
    "model: {name: Llama-3.1-8B}\n"
    "workload: {synthetic: {requests: 10, arrivals: {process: poisson, rate: 1}, input: {dist: fixed, value: 100}, "
    "output: {dist: fixed, value: 10}}}\n";
}  // namespace

TEST_CASE("scenario: every shipped scenario loads") {
  // Scenarios name their traces under $HEADROOM_DATA, which must hold them when a scenario is read.
  ::setenv("HEADROOM_DATA", test::data_file("azure2023_conv.csv").parent_path().c_str(), 1);
  std::filesystem::path dir = std::filesystem::path(HEADROOM_SOURCE_DIR) / "scenarios";
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path());
    Scenario s = load_scenario(entry.path());
    CHECK(s.name == entry.path().stem().string());
    CHECK(s.model.layers > 0);
    ++n;
  }
  CHECK(n >= 7);
  Scenario q = load_scenario(dir / "quickstart.yaml");
  CHECK(engine::engine_of(q.engine) == model::Engine::vllm);
  REQUIRE(q.workload.synthetic);
  CHECK(q.workload.synthetic->requests == 3000u);
  CHECK(q.workload.seed == 1);  // the scenario's seed when the workload gives none
  CHECK(q.on_oom == engine::OnOom::stop);
}

TEST_CASE("scenario: engine knobs under each engine's names") {
  Scenario v = parse_scenario(kBase + "engine: {kind: vllm, gpu_memory_utilization: 0.8, max_num_seqs: 256, "
                                      "block_size: 32, enable_prefix_caching: false}\n"
                                      "allocator: expandable_segments:True\non_oom: continue\n",
                              "x.yaml", "/tmp");
  auto& vc = std::get<engine::VllmConfig>(v.engine);
  CHECK(vc.gpu_memory_utilization == 0.8);
  CHECK(vc.max_num_seqs == 256);
  CHECK(vc.block_size == 32);
  CHECK_FALSE(vc.enable_prefix_caching);
  CHECK(v.allocator.expandable_segments);
  CHECK(v.on_oom == engine::OnOom::continue_running);
  std::string amd = kBase;
  amd.replace(amd.find("h100-sxm-80gb}"), 14, "mi300x, other_processes: 56GiB}");
  Scenario s = parse_scenario(amd + "engine: {kind: sglang, mem_fraction_static: 0.85, chunked_prefill_size: 4096, "
                                    "attention_backend: aiter}\n",
                              "x.yaml", "/tmp");
  auto& sc = std::get<engine::SglangConfig>(s.engine);
  CHECK(sc.mem_fraction_static == 0.85);
  CHECK(sc.chunked_prefill_size == 4096);
  CHECK(sc.attention_backend == engine::SglangAttentionBackend::aiter);
  CHECK(s.other_processes == 56 * GiB);
  CHECK(s.gpu.name == "mi300x");
  Scenario l = parse_scenario(kBase + "engine: {kind: lightllm, mem_fraction: 0.85, batch_max_tokens: 4096}\n", "x.yaml",
                              "/tmp");
  CHECK(std::get<engine::LightllmConfig>(l.engine).batch_max_tokens == 4096);
}

TEST_CASE("scenario: engine.version picks a modelled version (the newest by default) and others are errors") {
  Scenario v0 = parse_scenario(kBase + "engine: {kind: vllm, version: 0.6}\n", "x.yaml", "/tmp");
  CHECK(std::get<engine::VllmConfig>(v0.engine).version == engine::VllmVersion::v0_6);
  Scenario v1 = parse_scenario(kBase + "engine: {kind: vllm}\n", "x.yaml", "/tmp");
  CHECK(std::get<engine::VllmConfig>(v1.engine).version == engine::VllmVersion::current);
  Scenario l3 = parse_scenario(kBase + "engine: {kind: lightllm, version: 3.0.0}\n", "x.yaml", "/tmp");
  CHECK(std::get<engine::LightllmConfig>(l3.engine).version == engine::LightllmVersion::v3_0_0);
  Scenario v10 = parse_scenario(kBase + "engine: {kind: vllm, version: \"0.10\"}\n", "x.yaml", "/tmp");
  CHECK(std::get<engine::VllmConfig>(v10.engine).version == engine::VllmVersion::v0_10);
  Scenario s04 = parse_scenario(kBase + "engine: {kind: sglang, version: 0.4}\n", "x.yaml", "/tmp");
  CHECK(std::get<engine::SglangConfig>(s04.engine).version == engine::SglangVersion::v0_4);
  CHECK(error_of(kBase + "engine: {kind: vllm, version: 0.9}\n") ==
        "x.yaml:4:31: key 'engine.version': expected a modelled vLLM version, one of 0.6, 0.8, 0.10, current, got '0.9'");
  CHECK(error_of(kBase + "engine: {kind: lightllm, version: v1.2.0}\n") ==
        "x.yaml:4:35: key 'engine.version': expected a modelled LightLLM version, one of 2.0.0, 3.0.0, current, got 'v1.2.0'");
  CHECK(error_of(kBase + "engine: {kind: sglang, version: 0.5}\n") ==
        "x.yaml:4:33: key 'engine.version': expected a modelled SGLang version, one of 0.4, current, got '0.5'");
}

TEST_CASE("scenario: bad keys and values are errors with the place and a did-you-mean") {
  CHECK(error_of(kBase + "engine: {kind: vllm, gpu_memory_utilisation: 0.8}\n") ==
        "x.yaml:4:22: unknown key 'engine.gpu_memory_utilisation'; did you mean 'gpu_memory_utilization'?");
  CHECK(error_of(kBase + "engine: {kind: vlm}\n") ==
        "x.yaml:4:16: key 'engine.kind': expected vllm or sglang or lightllm, got 'vlm'; did you mean 'vllm'?");
  CHECK(error_of(kBase + "engine: {kind: vllm, gpu_memory_utilization: 1.5}\n") ==
        "x.yaml:4:46: key 'engine.gpu_memory_utilization': expected a fraction in (0, 1], got '1.5'");
  CHECK(error_of(kBase + "engine: {kind: vllm, max_num_seqs: many}\n") ==
        "x.yaml:4:36: key 'engine.max_num_seqs': expected a whole number from 1 to 9223372036854775807, got 'many'");
  CHECK(error_of(kBase + "engine: {kind: sglang, mem_fraction: 0.8}\n") ==
        "x.yaml:4:24: unknown key 'engine.mem_fraction'; did you mean 'mem_fraction_static'?");
  CHECK(error_of(kBase + "engine: {kind: vllm}\nallocator: max_split_size_mb:2\n") ==
        "x.yaml:5:12: key 'allocator': 'max_split_size_mb:2': CachingAllocator option max_split_size_mb too small, "
        "must be >= 20");
  CHECK(error_of(kBase + "engine: {kind: vllm}\non_oom: ignore\n") ==
        "x.yaml:5:9: key 'on_oom': expected stop or continue, got 'ignore'");
  CHECK(error_of(kBase + "engine: {kind: vllm}\nseeed: 3\n") == "x.yaml:5:1: unknown key 'seeed'; did you mean 'seed'?");
  CHECK(error_of("gpu: [1, 2\n") .rfind("x.yaml:2:1: not valid YAML", 0) == 0);
  CHECK(error_of(kBase) == "x.yaml: missing key 'engine'");
  std::string bad_gpu = kBase;
  bad_gpu.replace(bad_gpu.find("h100-sxm-80gb"), 13, "h100-sxm");
  CHECK(error_of(bad_gpu + "engine: {kind: vllm}\n").rfind(
            "x.yaml:1:16: key 'gpu.profile': unknown GPU profile 'h100-sxm'; did you mean 'h100-sxm-80gb'?", 0) == 0);
  std::string bad_model = kBase;
  bad_model.replace(bad_model.find("Llama-3.1-8B"), 12, "Llama-3.1-8C");
  CHECK(error_of(bad_model + "engine: {kind: vllm}\n").rfind(
            "x.yaml:2:15: key 'model.name': unknown model 'Llama-3.1-8C'; did you mean 'Llama-3.1-8B'?", 0) == 0);
}

TEST_CASE("scenario: every shipped sweep grid loads, each point validated") {
  std::filesystem::path dir = std::filesystem::path(HEADROOM_SOURCE_DIR) / "scenarios" / "sweeps";
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path());
    const headroom::scenario::SweepGrid grid = headroom::scenario::load_sweep_grid(entry.path());
    CHECK_FALSE(grid.points.empty());
    ++n;
  }
  CHECK(n >= 1);
  // The README's grid: 2 models × 2 GPUs × 3 policies × 2 utilisations, the last axis fastest.
  const auto grid = headroom::scenario::load_sweep_grid(dir / "quickstart.yaml");
  REQUIRE(grid.points.size() == 24);
  CHECK(grid.points[1].scenario.model.name == "Llama-3.1-8B");
  CHECK(std::get<headroom::engine::VllmConfig>(grid.points[1].scenario.engine).gpu_memory_utilization == 0.95);
  CHECK(grid.points[23].scenario.gpu.name == "h200-141gb");
  CHECK(grid.points[23].scenario.policy.kind == headroom::policy::PolicyKind::fragmentation_buffer);
  CHECK(grid.points[23].id == "d7dd2a3d3e365fbd");  // as the README's run printed it (the id hashes quickstart.yaml's text)
}

TEST_CASE("scenario: policy, compare, burst and mla_decode_out are read, and their bad values named") {
  const std::string vllm = "engine: {kind: vllm}\n";
  Scenario s = parse_scenario(kBase + vllm + "policy: {fragmentation_buffer: {k: 3, floor: 200MiB}}\n"
                                  "compare: [engine, {allocator: \"expandable_segments:True\"}]\n",
                              "x.yaml", "/tmp");
  CHECK(s.policy.kind == policy::PolicyKind::fragmentation_buffer);
  CHECK(s.policy.k == 3);
  CHECK(s.policy.floor == 200 * MiB);
  REQUIRE(s.compare.size() == 2);
  CHECK(s.compare[1].alloc_conf == "expandable_segments:True");

  CHECK(error_of(kBase + vllm + "policy: {profiled: {k: 2}}\n") ==
        "x.yaml:5:21: unknown key 'policy[0].profiled.k'");
  CHECK(error_of(kBase + vllm + "compare: [engine, static_fractoin]\n") ==
        "x.yaml:5:19: key 'compare[1]': unknown policy 'static_fractoin'; did you mean 'static_fraction'?; expected "
        "one of engine, static_fraction, profiled, fragmentation_buffer, auto_profile, workspace_aware, "
        "workspace_cap, shared_decode_buffer, release_on_oom, allocator");
  CHECK(error_of(kBase + vllm + "compare: []\n").find("key 'compare': expected a non-empty list of policies") !=
        std::string::npos);

  const std::string burst_base =
      "gpu: {profile: h100-sxm-80gb}\nmodel: {name: Llama-3.1-8B}\n" + vllm +
      "workload:\n  synthetic: {requests: 10, arrivals: {process: poisson, rate: 1}, input: {dist: fixed, value: 100}, "
      "output: {dist: fixed, value: 10}}\n  transforms:\n    burst: ";
  Scenario b = parse_scenario(burst_base + "{at_s: 5, duration_s: 2, factor: 3}\n", "x.yaml", "/tmp");
  REQUIRE(b.workload.transforms.burst);
  CHECK(b.workload.transforms.burst->factor == 3);
  CHECK(error_of(burst_base + "{at_s: 5, factor: 1}\n").find("key 'workload.transforms.burst.factor'") !=
        std::string::npos);
  CHECK(error_of(burst_base + "{duration_s: 5}\n").find("burst.at_s") != std::string::npos);

  // The engine's cross-field rule (engine_config resolve) runs as the file is read: a model without
  // MLA is refused there, naming the line, before anything starts.
  CHECK(error_of(kBase + "engine: {kind: vllm, mla_decode_out: per-layer}\n") ==
        "x.yaml:4:38: key 'engine.mla_decode_out': vllm mla_decode_out: 'per-layer' applies to MLA models only, and "
        "model 'Llama-3.1-8B' is not one");
  std::string mla = kBase;
  mla.replace(mla.find("Llama-3.1-8B"), 12, "DeepSeek-R1");
  Scenario m = parse_scenario(mla + "engine: {kind: vllm, mla_decode_out: per-layer}\n", "x.yaml", "/tmp");
  CHECK(std::get<engine::VllmConfig>(m.engine).mla_decode_out == model::DecodeOutBuffer::per_layer);
  CHECK(error_of(kBase + "engine: {kind: vllm, mla_decode_out: sideways}\n").find("mla_decode_out") != std::string::npos);
}
