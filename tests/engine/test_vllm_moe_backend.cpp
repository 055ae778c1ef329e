// vLLM's `--moe-backend flashinfer_cutlass` (docs/serving-memory-model.md §4b): the FlashInfer CUTLASS
// MoE workspace is allocated per call, so the profile run sees it and the KV budget pays for it.
#include <catch2/catch.hpp>

#include "sim/core/shell_words.hpp"
#include "sim/engine/engine_command_line.hpp"
#include "sim/engine/startup.hpp"
#include "sim/engine/vllm_config.hpp"
#include "tests/engine/deployment_on.hpp"

using namespace headroom;
using namespace headroom::engine;
using engine::test::on;

TEST_CASE("vLLM moe_backend flashinfer_cutlass: the profile's peak grows by the workspace over Triton's caches") {
  // max_num_seqs 16 keeps the sampler's rows below the forward's peak, so the profile peak is the
  // 8192-token MoE layer: FlashInfer's 542,125,184 B workspace + workspace13 against Triton's
  // cache13 + cache2 + the moe_align buffers, 678,964,352 − 472,682,492 = 206,281,860 B more.
  VllmConfig triton;
  triton.max_num_seqs = 16;
  triton.cudagraph_capture_sizes = std::vector<int>{1, 8};
  VllmConfig fi = triton;
  fi.moe_backend = model::MoeBackend::flashinfer_cutlass;
  StartupResult a = vllm_startup(on("h100-sxm-80gb", "Qwen3-30B-A3B"), triton);
  StartupResult b = vllm_startup(on("h100-sxm-80gb", "Qwen3-30B-A3B"), fi);
  REQUIRE(a.ok);
  REQUIRE(b.ok);
  const auto& fa = std::get<VllmFigures>(a.figures);
  const auto& fb = std::get<VllmFigures>(b.figures);
  // The peak counts allocator blocks: a cached block is handed out whole when splitting it would
  // leave less than 1 MiB (the large pool's split rule, allocator-model.md), so the measured
  // difference may exceed the requested one by up to about 1 MiB.
  const Bytes grew = fb.torch_peak_increase - fa.torch_peak_increase;
  CHECK(grew >= 206'281'860);
  CHECK(grew < 206'281'860 + 2 * MiB);
  CHECK(fa.available_kv - fb.available_kv == static_cast<std::int64_t>(grew));
  CHECK(b.kv_blocks < a.kv_blocks);
  // The captured graphs run the MoE too: each size's workspace lands in the pool.
  CHECK(b.bytes.graph_pool >= a.bytes.graph_pool);
}

TEST_CASE("vLLM moe_backend flashinfer_cutlass: GPUs, models and formats FlashInferExperts does not run are refused") {
  VllmConfig fi;
  fi.moe_backend = model::MoeBackend::flashinfer_cutlass;
  CHECK_THROWS_WITH(resolve(fi, on("a100-80gb", "Qwen3-30B-A3B")),
                    "vllm moe_backend: 'flashinfer_cutlass' runs on compute capability 9.0 or 10.x, and GPU "
                    "'a100-80gb' is 8.0");
  Deployment nvfp4 = on("b200", "Qwen3-30B-A3B");
  nvfp4.model.quantization.method = model::WeightQuantization::Method::nvfp4;
  CHECK_THROWS_WITH(resolve(fi, nvfp4), "vllm moe_backend: 'flashinfer_cutlass' is modelled for unquantized and fp8 "
                                        "per-tensor experts, and model 'Qwen3-30B-A3B' is nvfp4");
  CHECK_NOTHROW(resolve(fi, on("b200", "Qwen3-30B-A3B")));
}

TEST_CASE("vllm serve --moe-backend flashinfer_cutlass is read into moe_backend and auto is refused") {
  const ImportedCommandLine c =
      read_engine_command_line(shell_words("vllm serve Qwen/Qwen3-30B-A3B --moe-backend flashinfer_cutlass", "t"), "cmd");
  REQUIRE(c.knobs.size() == 1);
  CHECK(c.knobs[0].key == "moe_backend");
  CHECK(c.knobs[0].values == std::vector<std::string>{"flashinfer_cutlass"});
  CHECK_THROWS_WITH(
      read_engine_command_line(shell_words("vllm serve Qwen/Qwen3-30B-A3B --moe-backend auto", "t"), "cmd"),
      Catch::Contains("--moe-backend 'auto': expected one of triton, flashinfer_cutlass (the values headroom models)"));
}
