// The driver's memory for each instantiated CUDA graph (graph_capture.hpp exec_bytes_per_graph,
// deployment.hpp kDefaultGraphExecBytesPerLayer): outside PyTorch's allocator, charged after each
// capture, so that a capture can run the device out of memory where the pool alone would not.
#include <catch2/catch.hpp>

#include "sim/engine/graph_capture.hpp"
#include "sim/engine/startup.hpp"
#include "tests/engine/deployment_on.hpp"

using namespace headroom;
using namespace headroom::engine;

namespace {

// bs × 2 MiB allocated and freed: one 20 MiB large segment per pool (kLargeBuffer).
model::AllocationProgram exec_test_program(int bs) {
  model::AllocationProgram p;
  p.name = "exec";
  p.ops.push_back({static_cast<Bytes>(bs) * 2 * MiB, 0, model::kNoLayer, model::OpKind::alloc, model::Tensor::hidden, false});
  p.ops.push_back({0, 0, model::kNoLayer, model::OpKind::free, model::Tensor::hidden, false});
  p.slots = 1;
  REQUIRE(model::check_program(p).empty());
  return p;
}

struct ExecCapture {
  device::Device device;
  alloc::CachingAllocator allocator{device};
  model::SlotTable slots;
  std::vector<alloc::Block*> rng;
  std::vector<model::AllocationProgram> programs;
  GraphCaptureRun run;

  ExecCapture(Bytes total, Bytes exec) : device(device::DeviceSpec{.name = "test", .total = total}) {
    for (int bs : {4, 2, 1}) programs.push_back(exec_test_program(bs));
    std::vector<GraphCaptureStep> steps;
    for (const auto& p : programs) steps.push_back({&p, &p});
    GraphCaptureOptions o;
    o.exec_bytes_per_graph = exec;
    run = capture_graphs(allocator, slots, rng, steps, o);
  }
};

}  // namespace

TEST_CASE("graph execs: each capture's exec joins the memory outside the allocator, and one that does not fit fails") {
  // Reserved by the allocator: 20 MiB (warm-ups, default pool) + 20 MiB (the shared pool) + 2 MiB
  // (the RNG state's small segment) = 42 MiB. Three execs of 100 MiB fit in 512 MiB.
  ExecCapture fits(512 * MiB, 100 * MiB);
  REQUIRE(fits.run.completed);
  CHECK(fits.allocator.reserved_bytes() == 42 * MiB);
  CHECK(fits.run.exec_bytes == 300 * MiB);
  CHECK(fits.device.spec().context_bytes == 300 * MiB);
  CHECK(fits.device.free_bytes() == 512 * MiB - 42 * MiB - 300 * MiB);
  // In 256 MiB the second exec leaves 256 − 42 − 200 = 14 MiB: the third graph's instantiation
  // fails, with no allocator OOM, after the first two were charged.
  ExecCapture tight(256 * MiB, 100 * MiB);
  REQUIRE_FALSE(tight.run.completed);
  CHECK(tight.run.failed_in_instantiate);
  CHECK_FALSE(tight.run.oom.has_value());
  CHECK(tight.run.failed_step == 2);
  CHECK(tight.run.exec_bytes == 200 * MiB);
  CHECK(tight.device.spec().context_bytes == 200 * MiB);
  // Without execs nothing outside the allocator grows.
  ExecCapture none(256 * MiB, 0);
  REQUIRE(none.run.completed);
  CHECK(none.device.spec().context_bytes == 0);
}

TEST_CASE("graph execs at start-up: vLLM's 86 sizes of Llama-3.1-8B take 86 x 32 layers x 0.1875 MiB") {
  // vllm#23184: 6 MiB per captured size of Llama-3.1-8B (32 layers) = 196,608 B per layer.
  CHECK(kDefaultGraphExecBytesPerLayer == 196'608);
  VllmConfig c;
  c.max_num_seqs = 256;  // 51 PIECEWISE sizes up to 512, 35 FULL sizes up to 256
  Deployment with = headroom::engine::test::on("h100-sxm-80gb");
  Deployment without = with;
  without.graph_exec_bytes_per_layer = 0;
  StartupResult r = vllm_startup(with, c);
  StartupResult r0 = vllm_startup(without, c);
  REQUIRE(r.ok);
  REQUIRE(r0.ok);
  const Bytes execs = Bytes{51 + 35} * 32 * 196'608;  // 516 MiB
  CHECK(r.bytes.graph_execs == execs);
  CHECK(r0.bytes.graph_execs == 0);
  // V1 sizes the KV cache before the capture: the execs come out of the 1 − utilisation margin,
  // into the non-torch memory and vLLM's "Graph capturing finished, took X GiB".
  CHECK(r.kv_tokens == r0.kv_tokens);
  CHECK(r.bytes.graph_pool == r0.bytes.graph_pool);
  CHECK(r.bytes.non_torch - r0.bytes.non_torch == execs);
  CHECK(r0.bytes.device_free - r.bytes.device_free == execs);
  const auto& f = std::get<VllmFigures>(r.figures);
  const auto& f0 = std::get<VllmFigures>(r0.figures);
  CHECK(f.cudagraph_memory - f0.cudagraph_memory == execs);
}

TEST_CASE("graph execs at start-up: by the layers of the rank's pipeline stage, in SGLang too") {
  // Llama-3.1-8B at pp 2: 16 layers on stage 0; SGLang's default list on an H100.
  Deployment d = headroom::engine::test::on("h100-sxm-80gb");
  d.parallel.pp = 2;
  place_rank(d, EngineConfig{SglangConfig{}});
  StartupResult r = sglang_startup(d, SglangConfig{});
  REQUIRE(r.ok);
  REQUIRE(!r.graph_batch_sizes.empty());
  CHECK(r.bytes.graph_execs == static_cast<Bytes>(r.graph_batch_sizes.size()) * 16 * 196'608);
}
