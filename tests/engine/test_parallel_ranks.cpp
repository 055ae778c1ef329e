// Multi-GPU deployments as the engines form them (parallel_ranks.hpp, docs/serving-memory-model.md §9):
// NCCL connection buffers and the custom all-reduce per rank, the rank simulated and why, and what
// each engine's start-up makes of the memory they take.
#include <catch2/catch.hpp>

#include "sim/engine/engine_registry.hpp"
#include "sim/engine/sglang_config.hpp"
#include "sim/engine/startup.hpp"
#include "tests/engine/deployment_on.hpp"

using namespace headroom;
using namespace headroom::engine;

using headroom::engine::test::on;

namespace {

Bytes communicator_bytes_of(const CommunicatorMemory& m, const std::string& group) {
  for (const Communicator& c : m.communicators)
    if (c.group == group) return c.bytes;
  return 0;
}

}  // namespace

TEST_CASE("NCCL buffers: channels × peers × (NCCL_BUFFSIZE + LL 512 KiB + LL128 4,915,200 B)") {
  Parallelism p;
  // 16 channels, 2 ring peers: 32 × 9,633,792 B = 294 MiB per communicator of three or more ranks.
  CHECK(nccl_communicator_bytes(p, 8) == 32ull * (4 * MiB + 512 * KiB + 4'915'200));
  CHECK(nccl_communicator_bytes(p, 8) == 308'281'344);
  CHECK(nccl_communicator_bytes(p, 2) == 154'140'672);  // two ranks: one peer
  CHECK(nccl_communicator_bytes(p, 1) == 0);
  p.nccl_buffsize = 1 * MiB;  // NCCL_BUFFSIZE=1048576
  CHECK(nccl_communicator_bytes(p, 4) == 32ull * (1 * MiB + 512 * KiB + 4'915'200));
  p.nccl_channels = 32;
  p.nccl_peers = 1;
  CHECK(nccl_communicator_bytes(p, 4) == 32ull * (1 * MiB + 512 * KiB + 4'915'200));
}

TEST_CASE("vLLM TP4: one TP communicator and the custom all-reduce's 18 MiB of IPC buffers and 8 MiB rank_data") {
  Deployment d = on("h100-sxm-80gb", "Llama-3.1-70B", 4);
  const ParallelRules& vllm = engine_traits(model::Engine::vllm).parallel;
  CommunicatorMemory m = communicator_memory(d, vllm);
  REQUIRE(m.communicators.size() == 1);
  CHECK(m.communicators[0].group == "tp");
  CHECK(m.nccl == 308'281'344);
  // custom_all_reduce.py: meta = 3,456 B + 8 MiB and buffer = 8 MiB, each cudaMalloc'd in 2 MiB pages.
  CHECK(m.custom_all_reduce == 10 * MiB + 8 * MiB);
  CHECK(m.custom_all_reduce_rank_data == 8 * MiB);
  d.parallel.custom_all_reduce = false;  // --disable-custom-all-reduce
  CHECK(communicator_memory(d, vllm).custom_all_reduce == 0);
  d = on("h100-sxm-80gb", "Llama-3.1-8B", 1);
  CHECK(communicator_memory(d, vllm).outside_torch() == 0);  // one GPU: no communicator
  // custom_all_reduce.py: none on more than two PCIe-only GPUs, nor on four NVLink-bridged cards;
  // two of them keep it.
  CHECK(communicator_memory(on("l40s", "Llama-3.1-8B", 4), vllm).custom_all_reduce == 0);
  CHECK(communicator_memory(on("h100-nvl", "Llama-3.1-8B", 4), vllm).custom_all_reduce_rank_data == 0);
  CHECK(communicator_memory(on("l40s", "Llama-3.1-8B", 2), vllm).custom_all_reduce == 18 * MiB);
  CHECK(communicator_memory(on("mi300x", "Llama-3.1-70B", 8), vllm).custom_all_reduce == 18 * MiB);
}

TEST_CASE("vLLM DP + EP on a MoE: TP, DP and EP groups, SGLang DP attention: an attention-TP group") {
  Deployment d = on("h100-sxm-80gb", "Qwen3-30B-A3B", 2);
  d.parallel.dp = 2;
  d.parallel.ep = 4;
  CommunicatorMemory m = communicator_memory(d, engine_traits(model::Engine::vllm).parallel);
  CHECK(communicator_bytes_of(m, "tp") == 154'140'672);
  CHECK(communicator_bytes_of(m, "dp") == 154'140'672);
  CHECK(communicator_bytes_of(m, "ep") == 308'281'344);
  Deployment s = on("h100-sxm-80gb", "Qwen3-30B-A3B", 8);
  s.parallel.dp = 4;
  s.parallel.dp_attention = true;
  CommunicatorMemory sm = communicator_memory(s, engine_traits(model::Engine::sglang).parallel);
  CHECK(communicator_bytes_of(sm, "tp") == 308'281'344);
  CHECK(communicator_bytes_of(sm, "attn_tp") == 154'140'672);
  CHECK(communicator_bytes_of(sm, "dp") == 0);
}

TEST_CASE("the most loaded rank: the pipeline stage with the fewest KV tokens, the EP rank with the most experts") {
  Deployment d = on("h100-sxm-80gb", "Llama-3.1-8B");
  d.parallel.pp = 2;
  place_rank(d, VllmConfig{});
  REQUIRE(d.simulated_rank);
  // 16 layers each: the last stage holds the final norm besides an lm_head as large as the first
  // stage's embedding, so it has the least left for KV.
  CHECK(d.simulated_rank->placement.pp_rank == 1);
  CHECK(d.simulated_rank->rank == 1);
  CHECK_THAT(d.simulated_rank->why, Catch::Contains("pipeline stage 1 of 2 (layers 16-31, the final norm and lm_head)"));

  Deployment l = on("h100-sxm-80gb", "Llama-3.1-70B", 2);
  l.parallel.pp = 3;
  place_rank(l, VllmConfig{});
  CHECK(l.simulated_rank->placement.pp_rank == 0);  // 27 layers and the embedding (stages of 27, 27, 26)
  CHECK(l.simulated_rank->rank == 0);

  Deployment e = on("h100-sxm-80gb", "Qwen3-30B-A3B");
  e.parallel.dp = 3;
  e.parallel.ep = 3;
  place_rank(e, VllmConfig{});
  CHECK(e.simulated_rank->placement.moe_ep == 3);
  CHECK(e.simulated_rank->placement.moe_tp == 1);
  CHECK_THAT(e.simulated_rank->why, Catch::Contains("expert-parallel rank 0 holds 43 of 128 experts"));

  Deployment plain = on("h100-sxm-80gb", "Llama-3.1-70B", 4);
  place_rank(plain, VllmConfig{});
  CHECK_FALSE(plain.simulated_rank);  // plain TP: every rank alike
}

TEST_CASE("the engines' rules refuse what they refuse") {
  Deployment d = on("h100-sxm-80gb", "Qwen3-30B-A3B", 4);
  d.parallel.dp = 2;
  d.parallel.ep = 4;
  CHECK_THROWS_WITH(place_rank(d, VllmConfig{}),
                    "vllm --enable-expert-parallel spans every data- and tensor-parallel rank: parallel.ep must be 1 or "
                    "tp × dp = 8, got 4");
  d.parallel.ep = 3;
  CHECK_THROWS_WITH(place_rank(d, SglangConfig{}), "sglang --ep-size (3) must divide the tensor parallel size (4)");
  d.parallel.ep = 1;
  d.parallel.pp = 2;
  CHECK_THROWS_WITH(place_rank(d, LightllmConfig{}), "lightllm has no pipeline parallelism: parallel.pp must be 1, got 2");
  // vLLM's MoE layers split each expert over dp × tp: 768 is not divisible by 4 × 5 = 20.
  Deployment w = on("h100-sxm-80gb", "Qwen3-30B-A3B", 4);
  w.parallel.dp = 5;
  try {
    place_rank(w, VllmConfig{});
    FAIL("expected an error");
  } catch (const EngineConfigError& e) {
    CHECK(e.key() == "parallel.dp");
    CHECK_THAT(e.what(), Catch::Contains("moe intermediate size (768) must be divisible by expert tensor parallel size (20)"));
  }
}

TEST_CASE("SGLang reserves 3 MiB × cuda_graph_max_bs × dp with DP attention, 1.5 more above 300 (PR #10975)") {
  // H100 TP8: 512 + 12,288 + 1,024 + 1,024 = 14,848, then 512 × 8 × 3 = 12,288 and 512 × 8 × 1.5 = 6,144.
  CHECK(sglang_reserved_memory_mib(81559, 8, 8192, 512, 1, 16384, 8) == 14848.0 + 12288.0 + 6144.0);
  // cuda_graph_max_bs 256: 512 + 12,288 + 512 + 1,024 = 14,336, then 256 × 8 × 3 = 6,144 and no more.
  CHECK(sglang_reserved_memory_mib(81559, 8, 8192, 256, 1, 16384, 8) == 14336.0 + 6144.0);
}

TEST_CASE("start-ups with the communicators' memory: vLLM keeps its KV and loses margin while LightLLM loses KV") {
  Deployment d = on("h100-sxm-80gb", "Llama-3.1-8B", 2);
  const Bytes comm = 154'140'672 + 18 * MiB;  // NCCL TP2 + custom all-reduce IPC buffers
  VllmConfig v;
  v.enforce_eager = true;
  StartupResult with = vllm_startup(d, v);
  d.parallel.custom_all_reduce = false;
  d.parallel.nccl_channels = 1;
  StartupResult less = vllm_startup(d, v);
  REQUIRE(with.ok);
  REQUIRE(less.ok);
  // Current vLLM initialises NCCL before its snapshot: the KV cache is the same, the margin smaller.
  CHECK(with.kv_tokens == less.kv_tokens);
  CHECK(with.bytes.non_torch - less.bytes.non_torch == comm - 9'633'792);
  CHECK(with.parallel.communicators.nccl == 154'140'672);
  CHECK(with.memory.custom_all_reduce_rank_data != nullptr);

  d = on("h100-sxm-80gb", "Llama-3.1-8B", 2);
  LightllmConfig l;
  l.disable_cudagraph = true;
  l.disable_check_max_len_infer = true;
  StartupResult lw = lightllm_startup(d, l);
  d.parallel.custom_all_reduce = false;
  d.parallel.nccl_channels = 1;
  StartupResult ll = lightllm_startup(d, l);
  REQUIRE(lw.ok);
  REQUIRE(ll.ok);
  // LightLLM: free after the weights − total × (1 − mem_fraction): every byte comes out of the KV
  // cache (64 KiB per token at TP2), and so does the segment of the 8 MiB rank_data: PyTorch serves
  // a request between 1 and 10 MiB from a 20 MiB segment (kLargeBuffer), which empty_cache keeps.
  const Bytes cell = std::get<LightllmFigures>(lw.figures).cell;
  CHECK(cell == 64 * KiB);
  const std::int64_t lost = ll.kv_tokens - lw.kv_tokens;
  CHECK(lost >= static_cast<std::int64_t>((comm - 9'633'792 + 20 * MiB) / cell) - 1);
  CHECK(lost <= static_cast<std::int64_t>((comm - 9'633'792 + 20 * MiB) / cell) + 1);
}

TEST_CASE("a pipeline stage serves its own layers and only the last one samples") {
  Deployment d = on("h100-sxm-80gb", "Llama-3.1-8B");
  d.parallel.pp = 2;
  VllmConfig v;
  v.enforce_eager = true;
  place_rank(d, EngineConfig{v});
  StartupResult r = vllm_startup(d, v);
  REQUIRE(r.ok);
  REQUIRE(r.memory.kv_cache.size() == 16);  // one KV tensor per layer of the stage
  CHECK(std::get<VllmFigures>(r.figures).page_size == 64 * KiB);
  CHECK(r.parallel.placement.pp_rank == 1);
  CHECK(r.parallel.communicators.communicators.size() == 1);
  CHECK(r.parallel.communicators.communicators[0].group == "pp");
  // The first stage: no sampler in its profile run, so a smaller activation peak.
  d.simulated_rank->placement.pp_rank = 0;
  StartupResult first = vllm_startup(d, v);
  REQUIRE(first.ok);
  CHECK(std::get<VllmFigures>(first.figures).torch_peak_increase < std::get<VllmFigures>(r.figures).torch_peak_increase);
}
