// Step latency against published end-to-end measurements.
//
// vLLM's performance CI runs benchmark_latency.py with Llama-3.1-8B (bf16, TP 1): a batch of 8
// prompts of 32 tokens, 128 output tokens each, CUDA graphs on (vLLM's default), and publishes
// the mean wall time of the whole generate() call:
//   https://buildkite.com/vllm/performance-benchmark/builds/9555  "latency_llama8B_tp1 | 8xH100 |
//     997.542" ms mean (median 997.365, p99 999.409)
//   https://buildkite.com/vllm/performance-benchmark/builds/9523  "latency_llama8B_tp1 |
//     A100-SXM4-80GB | 1579.27" ms mean (median 1579.34, p99 1579.87)
// (page text: "Input length: 32 tokens. Output length: 128 tokens. Batch size: fixed (8).").
// The pages name the GPU "8xH100" without the form factor; h100-sxm-80gb is the built-in
// profile for it. The engine of that era (vLLM V0) does its scheduling, sampling and
// detokenisation on the CPU between steps, which the built-in graph_overhead_s does not include;
// the model is expected to be faster than the measurement, by less than the 1.5x.
#include <catch2/catch.hpp>

#include "sim/device/gpu_profile.hpp"
#include "sim/latency/step_latency.hpp"
#include "sim/model/catalogue.hpp"

using namespace headroom;
using namespace headroom::latency;

namespace {

// benchmark_latency.py's generate(): one prefill step of the whole batch (the first output token),
// then 127 decode steps, the k-th with 32 + k - 1 tokens cached per sequence.
Seconds benchmark_latency(const StepLatencyModel& m, int batch, int input_len, int output_len) {
  Batch prefill;
  for (int s = 0; s < batch; ++s) prefill.add_prefill(input_len, 0);
  Seconds total = m.step_time(prefill);  // prefill steps run eagerly (vLLM V0 captures decode only)
  for (int k = 1; k < output_len; ++k) {
    Batch decode;
    decode.cuda_graph = true;  // batch 8 is within vLLM's captured sizes
    for (int s = 0; s < batch; ++s) decode.add_decode(input_len + k - 1);
    total += m.step_time(decode);
  }
  return total;
}

}  // namespace

TEST_CASE("Llama-3.1-8B batch 8, 32 in / 128 out lands within 1.5x of vLLM's published latency") {
  const model::ModelConfig llama = model::catalogue_model("meta-llama/Llama-3.1-8B");
  struct Published {
    const char* profile;
    double measured_s;
  };
  // Modelled with the built-in (unfitted) coefficients: 752.9 ms on H100 (ratio 1.32) and
  // 1230.4 ms on A100 (ratio 1.28).
  for (const Published& p : {Published{"h100-sxm-80gb", 0.997542}, Published{"a100-80gb", 1.57927}}) {
    const StepLatencyModel m(llama, 1, model::KvCacheDtype::model, model::DType::bf16,
                             device::load_gpu_profile(p.profile));
    const Seconds modelled = benchmark_latency(m, 8, 32, 128);
    const double ratio = p.measured_s / modelled;
    INFO(p.profile << ": modelled " << modelled * 1e3 << " ms, measured " << p.measured_s * 1e3 << " ms, ratio "
                   << ratio);
    CHECK(ratio < 1.5);
    CHECK(ratio > 1 / 1.5);
  }
}

TEST_CASE("the model leaves out the engine's host work, so it is faster than every published run") {
  // The same benchmark on H200 (https://buildkite.com/vllm/performance-benchmark/builds/9513,
  // "latency_llama8B_tp1 | H200 | 834.059" ms mean) is modelled at 535.9 ms: ratio 1.56, outside
  // 1.5. The faster the GPU, the larger the share of the fixed host time per step that the
  // built-in graph_overhead_s (0.2 ms) does not cover; a fitted profile absorbs it.
  const model::ModelConfig llama = model::catalogue_model("meta-llama/Llama-3.1-8B");
  struct Published {
    const char* profile;
    double measured_s;
  };
  for (const Published& p : {Published{"h100-sxm-80gb", 0.997542}, Published{"a100-80gb", 1.57927},
                             Published{"h200-141gb", 0.834059}}) {
    const StepLatencyModel m(llama, 1, model::KvCacheDtype::model, model::DType::bf16,
                             device::load_gpu_profile(p.profile));
    INFO(p.profile);
    CHECK(benchmark_latency(m, 8, 32, 128) < p.measured_s);
  }
}
