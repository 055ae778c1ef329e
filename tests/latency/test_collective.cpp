// Collectives of tensor and pipeline parallelism (sim/latency/collective.hpp): worked numbers of
// each cost, vLLM's choice between its custom all-reduce kernels and NCCL, the public figures the
// model is held to (NCCL bus bandwidth on H100, vLLM's H100 all-reduce benchmark), one step's
// communication for Llama-3.1-70B at tp 4, and tp 1 left exactly as it was.
#include <catch2/catch.hpp>

#include "sim/core/error.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/latency/collective.hpp"
#include "sim/latency/step_latency.hpp"
#include "sim/model/catalogue.hpp"

using namespace headroom;
using namespace headroom::latency;

namespace {

device::Interconnect h100_link() { return *device::load_gpu_profile("h100-sxm-80gb").interconnect; }

// vLLM with its custom all-reduce set up: custom_all_reduce.py max_size = 8192 × 1024.
ParallelCommunication vllm_tp(int tp, bool custom = true) { return {tp, 1, custom, 8 * MiB}; }

// busBw as nccl-tests reports it for an all-reduce of `bytes` taking `seconds` (doc/PERFORMANCE.md).
double all_reduce_bus_bandwidth(double bytes, int n, Seconds seconds) { return bytes / seconds * 2 * (n - 1) / n; }

}  // namespace

TEST_CASE("collective costs: worked numbers on H100 NVLink 4") {
  const device::Interconnect link = h100_link();
  // busBw = 900 GB/s / 2 × 0.82 = 369 GB/s.
  const double bus = 369e9;
  REQUIRE(link.bus_bytes_per_s(8) == Approx(bus));
  const double mib = MiB;
  // Ring all-reduce of 1 MiB over 8: 6 µs + 14 × 1.5 µs + 1.75 × 1 MiB / 369 GB/s = 31.97 µs.
  CHECK(ring_all_reduce_seconds(mib, 8, link) == Approx(6e-6 + 21e-6 + 1.75 * mib / bus));
  CHECK(ring_all_reduce_seconds(mib, 8, link) == Approx(31.97e-6).epsilon(1e-3));
  // All-gather of 8 pieces of 1 MiB: 6 + 7 × 1.5 µs + 7 MiB / 369 GB/s.
  CHECK(ring_all_gather_seconds(mib, 8, link) == Approx(6e-6 + 10.5e-6 + 7 * mib / bus));
  // One-shot over 4: every rank reads 3 peers' 256 KiB: 6 µs + 3 × 256 KiB / 369 GB/s = 8.13 µs.
  CHECK(custom_all_reduce_seconds(256 * 1024.0, 4, AllReduceAlgorithm::one_shot, link) ==
        Approx(6e-6 + 3 * 262144 / bus));
  // Two-shot over 8: two stages, 2 × 7/8 of 1 MiB.
  CHECK(custom_all_reduce_seconds(mib, 8, AllReduceAlgorithm::two_shot, link) == Approx(12e-6 + 1.75 * mib / bus));
  // A pipeline hand-over of 1 MiB: 6 + 1.5 µs + 1 MiB / 369 GB/s.
  CHECK(send_recv_seconds(mib, 2, link) == Approx(7.5e-6 + mib / bus));
  CHECK(ring_all_reduce_seconds(mib, 1, link) == 0);
  CHECK(all_reduce_seconds(mib, vllm_tp(1), link) == 0);
}

TEST_CASE("vLLM's all-reduce choice: custom one-shot, two-shot, or NCCL") {
  const device::Interconnect nvlink = h100_link();
  using A = AllReduceAlgorithm;
  // csrc/custom_all_reduce.cuh: 2 ranks always one-shot; ≤ 4 ranks one-shot below 512 KiB, ≤ 8
  // below 256 KiB; two-shot above, up to custom_all_reduce.py's max_size (8 MiB, exclusive).
  CHECK(all_reduce_algorithm(4.0 * MiB, vllm_tp(2), nvlink) == A::one_shot);
  CHECK(all_reduce_algorithm(512.0 * 1024 - 16, vllm_tp(4), nvlink) == A::one_shot);
  CHECK(all_reduce_algorithm(512.0 * 1024, vllm_tp(4), nvlink) == A::two_shot);
  CHECK(all_reduce_algorithm(256.0 * 1024 - 16, vllm_tp(8), nvlink) == A::one_shot);
  CHECK(all_reduce_algorithm(256.0 * 1024, vllm_tp(6), nvlink) == A::two_shot);
  CHECK(all_reduce_algorithm(8.0 * MiB - 16, vllm_tp(8), nvlink) == A::two_shot);
  CHECK(all_reduce_algorithm(8.0 * MiB, vllm_tp(8), nvlink) == A::nccl_ring);
  // --disable-custom-all-reduce, or none set up: NCCL.
  CHECK(all_reduce_algorithm(1024, vllm_tp(8, false), nvlink) == A::nccl_ring);
  // More than two PCIe-only GPUs keep NCCL (should_custom_ar); two of them use the custom kernel.
  const device::Interconnect pcie = *device::load_gpu_profile("l40s").interconnect;
  CHECK(all_reduce_algorithm(1024, vllm_tp(4), pcie) == A::nccl_ring);
  CHECK(all_reduce_algorithm(1024, vllm_tp(2), pcie) == A::one_shot);
  // H100 NVL: a bridged pair is NVLink; four cards are not fully connected, and cross PCIe.
  const device::GpuProfile nvl = device::load_gpu_profile("h100-nvl");
  CHECK(all_reduce_algorithm(1024, vllm_tp(4), *nvl.interconnect) == A::nccl_ring);
  CHECK(ring_all_reduce_seconds(64.0 * MiB, 4, *nvl.interconnect) >
        4 * ring_all_reduce_seconds(64.0 * MiB, 2, *nvl.interconnect));
}

TEST_CASE("held to public figures: NCCL ring bus bandwidth and vLLM's H100 all-reduce benchmark") {
  const device::Interconnect link = h100_link();
  // NVIDIA/nccl#1455: NCCL_ALGO=RING all_reduce_perf, 2 to 4 GB on 2 to 8 H100 SXM: busBw 365-370
  // GB/s (NVIDIA/nccl-tests#212: "~370 GB/s" of the 450 GB/s line rate). Tolerance: ±2 %.
  for (int n = 2; n <= 8; ++n) {
    INFO(n);
    const double bytes = 4.0 * GiB;
    CHECK(all_reduce_bus_bandwidth(bytes, n, ring_all_reduce_seconds(bytes, n, link)) == Approx(367.5e9).epsilon(0.02));
  }
  // vllm-project/vllm PR #24111 (benchmarks/kernels/benchmark_device_communicators.py on H100,
  // bf16 (tokens, 8192), ms per all-reduce): ca_1stage, ca_2stage, pynccl at 0.5, 1, 2, 4 MiB.
  // Tolerances (docs/models-and-gpus.md "Interconnect"): one-shot within 11 %; two-shot and NCCL
  // from 0.65 to 1.1 of the measured time (the model reaches the peak bus bandwidth at sizes where
  // the measured kernels do not yet).
  struct Row {
    int n;
    double mib;
    double one_shot_ms, two_shot_ms, nccl_ms;
  };
  const Row rows[] = {
      {4, 0.5, 0.010, 0.017, 0.017}, {4, 1, 0.015, 0.018, 0.019}, {4, 2, 0.022, 0.027, 0.026},
      {4, 4, 0.038, 0.043, 0.037},   {6, 0.5, 0.013, 0.015, 0.023}, {6, 1, 0.021, 0.017, 0.025},
      {6, 2, 0.038, 0.026, 0.043},   {6, 4, 0.070, 0.037, 0.053},
  };
  for (const Row& r : rows) {
    INFO("tp " << r.n << ", " << r.mib << " MiB");
    const double bytes = r.mib * MiB;
    const double one = custom_all_reduce_seconds(bytes, r.n, AllReduceAlgorithm::one_shot, link) / (r.one_shot_ms * 1e-3);
    const double two = custom_all_reduce_seconds(bytes, r.n, AllReduceAlgorithm::two_shot, link) / (r.two_shot_ms * 1e-3);
    const double ring = ring_all_reduce_seconds(bytes, r.n, link) / (r.nccl_ms * 1e-3);
    CHECK(one == Approx(1).margin(0.11));
    CHECK(two >= 0.65);
    CHECK(two <= 1.1);
    CHECK(ring >= 0.65);
    CHECK(ring <= 1.1);
  }
}

TEST_CASE("one step's communication: Llama-3.1-70B at tp 4 on H100, and tp 1 unchanged") {
  const model::ModelConfig llama = model::catalogue_model("Llama-3.1-70B");
  const device::GpuProfile h100 = device::load_gpu_profile("h100-sxm-80gb");
  const double bus = 369e9;
  Batch decode;
  for (int i = 0; i < 8; ++i) decode.add_decode(1000);
  // 161 all-reduces (embedding + 2 × 80 layers) of 8 × 8192 × 2 B = 128 KiB: one-shot, 6 µs +
  // 3 × 128 KiB / 369 GB/s each; the logits' all-gather of 8 rows × 128,256 / 4 × 2 B per rank.
  const double all_reduce = 6e-6 + 3 * 131072 / bus;
  const double piece = 8 * (128256 / 4) * 2.0;
  const double gather = 6e-6 + 3 * 1.5e-6 + 3 * piece / bus;
  const StepCommunication tp4(llama, vllm_tp(4), h100);
  CHECK(tp4.seconds(decode) == Approx(161 * all_reduce + gather));
  CHECK(tp4.seconds(decode) == Approx(1.152e-3).epsilon(1e-3));
  CHECK(tp4.seconds(Batch{}) == 0);
  // Without the custom all-reduce: NCCL rings, 6 + 6 × 1.5 µs + 1.5 × 128 KiB / 369 GB/s each.
  const StepCommunication nccl(llama, vllm_tp(4, false), h100);
  CHECK(nccl.seconds(decode) == Approx(161 * (15e-6 + 1.5 * 131072 / bus) + gather));
  // pp 2 over tp 4: one hand-over of the hidden states and the residual (2 × 8 × 8192 × 2 B).
  const StepCommunication pp2(llama, {4, 2, true, 8 * MiB}, h100);
  CHECK(pp2.seconds(decode) - tp4.seconds(decode) == Approx(7.5e-6 + 262144 / bus));

  // In the step time: the kernels' time plus this; at tp 1 nothing is added, bit for bit.
  StepLatencyModel with(llama, 4, model::KvCacheDtype::model, model::DType::bf16, h100);
  const Seconds kernels = with.step_time(decode);
  with.set_communication(tp4);
  CHECK(with.step_time(decode) == Approx(kernels + tp4.seconds(decode)));
  CHECK(with.step_time_by_term(decode).communication == Approx(tp4.seconds(decode)));
  const model::ModelConfig small = model::catalogue_model("Llama-3.1-8B");
  const StepLatencyModel tp1(small, 1, model::KvCacheDtype::model, model::DType::bf16, h100);
  StepLatencyModel tp1_set(small, 1, model::KvCacheDtype::model, model::DType::bf16, h100);
  tp1_set.set_communication(StepCommunication(small, vllm_tp(1), h100));
  CHECK(tp1_set.step_time(decode) == tp1.step_time(decode));

  // A profile without an interconnect cannot price it.
  device::GpuProfile bare = h100;
  bare.interconnect.reset();
  CHECK_THROWS_WITH(StepCommunication(llama, vllm_tp(4), bare),
                    "GPU profile 'h100-sxm-80gb' gives no interconnect: the step latency of tp 4 × pp 1 needs its link "
                    "and bandwidth (docs/models-and-gpus.md \"Interconnect\")");
}
