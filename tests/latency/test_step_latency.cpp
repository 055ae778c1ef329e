// Step latency: the batch summary, GEMM shapes against the model's weights, monotonicity in
// tokens, batch and context, the memory-bound decode and compute-bound prefill limits, CUDA
// graphs, MoE routing, MLA context decompression, FP8 peaks, and bad input.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/latency/step_latency.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/weights.hpp"
#include "tests/latency/llama_h100.hpp"

using namespace headroom;
using namespace headroom::latency;
using headroom::test::llama_h100;

namespace {

struct Served {
  const char* model;
  int tp;
  model::DType weights;
};

// One of each architecture family: dense GQA, MoE with top-k routing, MLA + MoE with shared
// experts and dense layers, a model with q/k/v biases.
const Served kServed[] = {
    {"Llama-3.1-8B", 1, model::DType::bf16},  {"Llama-3.1-70B", 4, model::DType::bf16},
    {"Qwen2.5-7B", 1, model::DType::bf16},    {"Qwen3-30B-A3B", 2, model::DType::bf16},
    {"Mixtral-8x7B", 2, model::DType::bf16},  {"DeepSeek-V3", 8, model::DType::fp8},
};

StepLatencyModel make(const Served& s, const char* gpu = "h100-sxm-80gb") {
  return StepLatencyModel(model::catalogue_model(s.model), s.tp, model::KvCacheDtype::model, s.weights,
                          device::load_gpu_profile(gpu));
}


Batch prefill(std::int64_t tokens, std::int64_t cached = 0) {
  Batch b;
  b.add_prefill(tokens, cached);
  return b;
}

Batch decode(std::int64_t sequences, std::int64_t context, bool graph) {
  Batch b;
  b.cuda_graph = graph;
  for (std::int64_t i = 0; i < sequences; ++i) b.add_decode(context);
  return b;
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a batch is summarised as sums, with causal query-key pairs") {
  Batch b;
  b.add_prefill(4, 10);  // token i attends to 10 cached + (i + 1) own: 11 + 12 + 13 + 14 = 50
  b.add_prefill(3, 0);   // 1 + 2 + 3 = 6
  b.add_decode(100);
  b.add_decode(7);
  CHECK(b.prefill_chunks == 2);
  CHECK(b.prefill_tokens == 7);
  CHECK(b.prefill_cached == 10);
  CHECK(b.prefill_attention_pairs == 56);
  CHECK(b.decode_sequences == 2);
  CHECK(b.decode_context == 107);
  CHECK(b.tokens() == 9);
  CHECK(b.sampled_sequences() == 4);
  CHECK(!b.empty());
  CHECK(Batch{}.empty());
}

TEST_CASE("an empty batch takes no time") {
  const StepLatencyModel m = llama_h100();
  CHECK(m.step_time(Batch{}) == 0);
  Batch graph;
  graph.cuda_graph = true;
  CHECK(m.step_time(graph) == 0);
}

TEST_CASE("the serving loop's cached GEMM terms give the same seconds, bit for bit") {
  // GemmTermCache keeps a step's GEMM terms by its rows; a step that finds them there (the same
  // rows, other contexts) or evicts another's (1,024 slots, 3,000 row counts) must time exactly as
  // step_time(batch) does. Dense, MoE (expected experts touched) and MLA (kv_b_proj rows follow the
  // cached context), eager and graph steps, with and without the kernel floor.
  for (const Served& s : {kServed[0], kServed[3], kServed[5]}) {
    INFO(s.model);
    const StepLatencyModel m = make(s);
    GemmTermCache cache;
    for (int round = 0; round < 2; ++round)
      for (std::int64_t seqs = 1; seqs <= 3000; seqs += seqs < 300 ? 1 : 97) {
        Batch b;
        for (std::int64_t i = 0; i < seqs; ++i) b.add_decode(100 + 7 * i + round);
        b.cuda_graph = seqs % 2 == 0;
        if (seqs % 5 == 0) b.add_prefill(seqs * 3, round * 512);
        INFO("seqs " << seqs << " round " << round);
        CHECK(m.step_time(b, cache) == m.step_time(b));
      }
    CHECK(m.step_time(Batch{}, cache) == 0);
  }
}

TEST_CASE("the GEMMs cover every weight matrix of the model on the rank") {
  // Everything weights.hpp allocates except the embedding gather, norms and biases: the quantized
  // weights with their scales (DeepSeek-V3's FP8 blocks), as a GEMM reads them.
  for (const Served& s : kServed) {
    INFO(s.model << " TP " << s.tp);
    const model::ModelConfig config = model::catalogue_model(s.model);
    model::WeightOptions options;
    options.tp = s.tp;
    Bytes matrices = 0;
    for (const model::WeightTensor& t : model::model_weights(config, options).tensors) {
      const bool skip = t.name.find("embed_tokens") != std::string::npos ||
                        t.name.find("norm") != std::string::npos || t.name.find("bias") != std::string::npos;
      if (!skip) matrices += t.bytes();
    }
    CHECK(make(s).gemm_weight_bytes() == matrices);
  }
}

TEST_CASE("Llama-3.1-8B has the GEMM shapes of its config") {
  const StepLatencyModel m = llama_h100();
  std::vector<std::string> names;
  for (const Gemm& g : m.gemms()) names.emplace_back(g.name);
  CHECK(names == std::vector<std::string>{"qkv_proj", "o_proj", "gate_up_proj", "down_proj", "lm_head"});
  const Gemm& qkv = m.gemms()[0];
  CHECK(qkv.in == 4096);
  CHECK(qkv.out == (32 + 2 * 8) * 128);
  CHECK(qkv.layers == 32);
  CHECK(m.gemms()[2].out == 2 * 14336);
  CHECK(m.gemms()[4].out == 128256);
  CHECK(m.gemms()[4].rows == GemmRows::sampled);
  CHECK(m.kv_bytes_per_token() == 32 * 2 * 8 * 128 * 2);  // layers × K,V × heads × D × bf16
}

TEST_CASE("step time grows with prefill tokens") {
  for (const Served& s : kServed) {
    INFO(s.model);
    const StepLatencyModel m = make(s);
    for (std::int64_t cached : {0, 4096}) {
      Seconds previous = 0;
      for (std::int64_t tokens = 1; tokens <= 32768; tokens *= 2) {
        const Seconds t = m.step_time(prefill(tokens, cached));
        INFO("tokens " << tokens << " cached " << cached);
        CHECK(t > previous);
        previous = t;
      }
    }
  }
}

TEST_CASE("step time grows with the decode batch") {
  for (const Served& s : kServed) {
    INFO(s.model);
    const StepLatencyModel m = make(s);
    for (bool graph : {false, true}) {
      Seconds previous = 0;
      for (std::int64_t batch = 1; batch <= 1024; batch *= 2) {
        const Seconds t = m.step_time(decode(batch, 2000, graph));
        INFO("batch " << batch << " graph " << graph);
        CHECK(t > previous);
        previous = t;
      }
    }
  }
}

TEST_CASE("step time grows with context") {
  for (const Served& s : kServed) {
    INFO(s.model);
    const StepLatencyModel m = make(s);
    Seconds previous_decode = 0, previous_prefill = 0;
    for (std::int64_t context = 0; context <= 131072; context = context == 0 ? 1024 : context * 2) {
      INFO("context " << context);
      const Seconds d = m.step_time(decode(64, context, true));
      const Seconds p = m.step_time(prefill(512, context));
      CHECK(d > previous_decode);
      CHECK(p > previous_prefill);
      previous_decode = d;
      previous_prefill = p;
    }
  }
}

TEST_CASE("a decode step replayed from a CUDA graph is faster than an eager one at small batch") {
  const StepLatencyModel m = llama_h100();
  const auto& c = m.coefficients();
  for (std::int64_t batch : {1, 2, 4, 8, 16}) {
    INFO("batch " << batch);
    const Seconds eager = m.step_time(decode(batch, 512, false));
    const Seconds graph = m.step_time(decode(batch, 512, true));
    CHECK(graph < eager);
    CHECK(eager - graph == Approx(c.step_overhead_s - c.graph_overhead_s));
  }
}

TEST_CASE("a small decode step is memory-bound: weight bytes over bandwidth") {
  const StepLatencyModel m = llama_h100();
  const auto& c = m.coefficients();
  const double bandwidth = m.profile().bandwidth_bytes_per_s * c.memory_efficiency;
  const Batch one = decode(1, 100, true);
  const StepTerms t = m.terms(one, c);
  CHECK(t.gemm_compute == 0);  // every GEMM is on the bandwidth side of its roofline
  // Llama-3.1-8B in bf16 reads its 7.5 G GEMM parameters once: 15.0 GB, 5.6 ms on H100 at 80 %.
  const double weights_s = static_cast<double>(m.gemm_weight_bytes()) / bandwidth;
  CHECK(m.gemm_weight_bytes() == Approx(15.01e9).epsilon(0.001));
  const StepTime by_term = m.step_time_by_term(one);
  CHECK(by_term.gemm == Approx(weights_s).epsilon(0.001));  // activations add < 0.1 %
  CHECK(by_term.overhead == c.graph_overhead_s);
  // The KV cache of 101 tokens adds 13 MB: the whole step is within 1 % of the weight time.
  CHECK(m.step_time(one) == Approx(weights_s + c.graph_overhead_s).epsilon(0.01));
}

TEST_CASE("a long prefill is compute-bound: FLOPs over peak at the GEMM efficiency") {
  const StepLatencyModel m = llama_h100();
  const auto& c = m.coefficients();
  const double tokens = 8192;
  const StepTime by_term = m.step_time_by_term(prefill(8192));
  // 2 FLOPs per weight and token for every GEMM but lm_head, which runs on the one sampled row.
  double flops = 0;
  for (const Gemm& g : m.gemms())
    if (g.rows == GemmRows::tokens) flops += 2 * tokens * static_cast<double>(g.in * g.out) * g.layers;
  const double efficiency = c.gemm_peak_efficiency * tokens / (tokens + c.gemm_half_efficiency_tokens);
  const double expected = flops / (m.profile().dense_bf16_flops_per_s * efficiency);
  CHECK(by_term.gemm > expected);
  CHECK(by_term.gemm == Approx(expected).epsilon(0.01));  // + the memory-bound lm_head row
  // Causal attention over 8192 tokens: 4 · 32 heads · 128 · 32 layers FLOPs per pair.
  const double attention = 4.0 * 32 * 128 * 32 * (tokens * (tokens + 1) / 2);
  CHECK(by_term.attention ==
        Approx(attention / (m.profile().dense_bf16_flops_per_s * c.attention_efficiency)).epsilon(1e-9));
}

TEST_CASE("a MoE step reads the weights of the experts its tokens touch") {
  const Served qwen{"Qwen3-30B-A3B", 1, model::DType::bf16};
  const StepLatencyModel m = make(qwen);
  const auto& c = m.coefficients();
  Bytes expert_bytes = 0, other_bytes = 0;
  for (const Gemm& g : m.gemms()) (g.experts > 1 ? expert_bytes : other_bytes) += g.weight_bytes();
  const double bandwidth = m.profile().bandwidth_bytes_per_s * c.memory_efficiency;
  // One token routes to 8 of 128 experts: 1/16 of the expert weights.
  const double one_token = (static_cast<double>(other_bytes) + static_cast<double>(expert_bytes) / 16) / bandwidth;
  CHECK(m.step_time_by_term(decode(1, 10, true)).gemm == Approx(one_token).epsilon(0.002));
  // 64 tokens miss a given expert with probability (120/128)^64 = 1.6 %: nearly all are read.
  const StepTerms wide = m.terms(decode(64, 10, true), c);
  const double all = static_cast<double>(m.gemm_weight_bytes()) / m.profile().bandwidth_bytes_per_s;
  CHECK(wide.gemm_memory < all * 1.01);
  CHECK(wide.gemm_memory > all * 0.98);
}

TEST_CASE("MLA prefill pays for decompressing the cached context and GQA prefill does not") {
  const StepLatencyModel deepseek = make(kServed[5]);  // TP 8: 16 heads per rank
  const StepLatencyModel llama = llama_h100();
  // kv_b_proj turns each cached token's 512-wide latent into 16 × (128 + 128) K/V values in bf16:
  // reading and writing them is 16384 × (512 + 4096) × 2 B × 61 layers = 9.2 GB, memory-bound.
  const auto& c = deepseek.coefficients();
  const double decompress = 16384.0 * (512 + 4096) * 2 * 61 / (deepseek.profile().bandwidth_bytes_per_s * c.memory_efficiency);
  const double added = deepseek.step_time_by_term(prefill(256, 16384)).gemm - deepseek.step_time_by_term(prefill(256)).gemm;
  CHECK(added == Approx(decompress).epsilon(0.05));
  CHECK(llama.step_time_by_term(prefill(256, 16384)).gemm == llama.step_time_by_term(prefill(256)).gemm);
}

TEST_CASE("FP8 weights halve the bytes and run at the FP8 peak where the GPU has one") {
  const model::ModelConfig llama = model::catalogue_model("Llama-3.1-8B");
  auto model_on = [&](const char* gpu, model::DType weights) {
    return StepLatencyModel(llama, 1, model::KvCacheDtype::model, weights, device::load_gpu_profile(gpu));
  };
  const StepLatencyModel h100_bf16 = model_on("h100-sxm-80gb", model::DType::bf16);
  const StepLatencyModel h100_fp8 = model_on("h100-sxm-80gb", model::DType::fp8);
  const StepLatencyModel a100_bf16 = model_on("a100-80gb", model::DType::bf16);
  const StepLatencyModel a100_fp8 = model_on("a100-80gb", model::DType::fp8);
  // lm_head stays bf16: 1.05 GB of the 15.0 GB.
  CHECK(h100_fp8.gemm_weight_bytes() == (h100_bf16.gemm_weight_bytes() - 128256ull * 4096 * 2) / 2 + 128256ull * 4096 * 2);
  // A batch-1 decode reads half the bytes on H100. On A100 the FP8 weights run through bf16
  // math, and at 1 row the default efficiency ramp (half at 128 rows) makes that math, not the
  // halved bytes, the limit: faster than bf16, but not twice.
  const Batch small = decode(1, 100, true);
  CHECK(h100_fp8.step_time(small) < 0.6 * h100_bf16.step_time(small));
  CHECK(a100_fp8.step_time(small) < a100_bf16.step_time(small));
  CHECK(a100_fp8.terms(small, a100_fp8.coefficients()).gemm_compute > 0);
  // A long prefill is compute-bound: FP8 tensor cores double the H100's rate; the A100 has none
  // and runs FP8 weights through bf16 math (weight-only), as fast as bf16.
  const Batch big = prefill(8192);
  CHECK(h100_fp8.step_time_by_term(big).gemm < 0.55 * h100_bf16.step_time_by_term(big).gemm);
  CHECK(a100_fp8.step_time_by_term(big).gemm == Approx(a100_bf16.step_time_by_term(big).gemm).epsilon(0.01));
}

TEST_CASE("quantized checkpoints: a decode step reads the bytes the format stores, at the format's peak") {
  using M = model::WeightQuantization::Method;
  auto as = [](M method, int bits, int group) {
    model::ModelConfig c = model::catalogue_model("Llama-3.1-8B");
    c.quantization.method = method;
    c.quantization.bits = bits;
    c.quantization.group_size = group;
    return c;
  };
  device::GpuProfile h100 = device::load_gpu_profile("h100-sxm-80gb");
  h100.latency.gemm_half_efficiency_tokens = 0;  // no ramp: a 1-row GEMM is on its memory side
  const StepLatencyModel w4a16(as(M::wna16, 4, 128), 1, model::KvCacheDtype::model, model::DType::bf16, h100);
  // qkv_proj [6144, 4096] as compressed-tensors W4A16 stores it: 6144 × 512 int32, 6144 × 32 bf16
  // scales and the int64 [2] weight_shape.
  CHECK(w4a16.gemms()[0].matrix_bytes == 12'582'912 + 393'216 + 16);
  // Per layer 112,459,840 B (weights.cpp's worked checkpoint) × 32, plus the bf16 lm_head.
  CHECK(w4a16.gemm_weight_bytes() == 112'459'840ull * 32 + 128256ull * 4096 * 2);
  // Batch-1 decode: the weights plus the activations read and written (69,632 × 32 + 132,352
  // elements of 2 B) at 3.35 TB/s × 0.8.
  const double bytes = 112'459'840.0 * 32 + 128256.0 * 4096 * 2 + (69632.0 * 32 + 132352) * 2;
  CHECK(w4a16.step_time_by_term(decode(1, 100, true)).gemm == Approx(bytes / (3.35e12 * 0.8)).epsilon(1e-9));
  // The 16-bit model reads 15.01 GB: 3.2× the time.
  const StepLatencyModel bf16(model::catalogue_model("Llama-3.1-8B"), 1, model::KvCacheDtype::model,
                              model::DType::bf16, h100);
  CHECK(bf16.step_time_by_term(decode(1, 100, true)).gemm / w4a16.step_time_by_term(decode(1, 100, true)).gemm ==
        Approx(3.23).epsilon(0.01));
  // Peaks: W4A16 dequantizes to bf16; FP8 checkpoints at the fp8 peak on H100, bf16 on A100
  // (no FP8 tensor cores); NVFP4 at the fp4 peak on B200, bf16 (Marlin) on H100.
  CHECK(w4a16.gemms()[0].peak_flops_per_s == 989.5e12);
  auto qkv_peak = [&](M method, const char* gpu) {
    return StepLatencyModel(as(method, 0, method == M::nvfp4 ? 16 : 0), 1, model::KvCacheDtype::model,
                            model::DType::bf16, device::load_gpu_profile(gpu))
        .gemms()[0]
        .peak_flops_per_s;
  };
  CHECK(qkv_peak(M::fp8_channel, "h100-sxm-80gb") == 1979e12);
  CHECK(qkv_peak(M::fp8_channel, "a100-80gb") == 312e12);
  CHECK(qkv_peak(M::nvfp4, "b200") == 9000e12);
  CHECK(qkv_peak(M::nvfp4, "h100-sxm-80gb") == 989.5e12);
  // FP8 per channel: one byte per weight and a float32 scale per output row.
  const StepLatencyModel fp8(as(M::fp8_channel, 0, 0), 1, model::KvCacheDtype::model, model::DType::bf16, h100);
  CHECK(fp8.gemms()[0].matrix_bytes == 6144 * 4096 + 6144 * 4);
  // MXFP4 quantizes gpt-oss's experts only: attention stays bf16, an expert's w2 [2880, 2880] is
  // 2880 × 1440 B of fp4 pairs and 2880 × 90 e8m0 scales.
  const StepLatencyModel oss(model::catalogue_model("gpt-oss-20b"), 1, model::KvCacheDtype::model, model::DType::bf16,
                             h100);
  for (const Gemm& g : oss.gemms()) {
    if (g.name == "qkv_proj") CHECK(g.matrix_bytes == static_cast<Bytes>(g.in * g.out * 2));
    if (g.name == "experts.w2") CHECK(g.matrix_bytes == 2880 * 1440 + 2880 * 90);
  }
}

TEST_CASE("a KV cache in FP8 halves the decode attention time") {
  const model::ModelConfig llama = model::catalogue_model("Llama-3.1-8B");
  const auto h100 = device::load_gpu_profile("h100-sxm-80gb");
  const StepLatencyModel bf16(llama, 1, model::KvCacheDtype::model, model::DType::bf16, h100);
  const StepLatencyModel fp8(llama, 1, model::KvCacheDtype::fp8, model::DType::bf16, h100);
  const Batch long_context = decode(64, 32768, true);
  CHECK(fp8.step_time_by_term(long_context).attention ==
        Approx(bf16.step_time_by_term(long_context).attention / 2).epsilon(1e-9));
}

TEST_CASE("bad models, dtypes and coefficients are input errors") {
  const model::ModelConfig llama = model::catalogue_model("Llama-3.1-8B");
  device::GpuProfile h100 = device::load_gpu_profile("h100-sxm-80gb");
  CHECK(error_of([&] {
          StepLatencyModel(llama, 3, model::KvCacheDtype::model, model::DType::bf16, h100);
        }) == "model 'Llama-3.1-8B': total number of attention heads (32) must be divisible by tensor parallel size (3)");
  CHECK(error_of([&] {
          StepLatencyModel(llama, 1, model::KvCacheDtype::model, model::DType::fp32, h100);
        }) == "model 'Llama-3.1-8B': weight dtype fp32 is not modelled for step latency (the GPU profile gives bf16 "
              "and fp8 peaks only)");
  h100.latency.memory_efficiency = 0;
  CHECK(error_of([&] {
          StepLatencyModel(llama, 1, model::KvCacheDtype::model, model::DType::bf16, h100);
        }) == "GPU profile 'h100-sxm-80gb': latency.memory_efficiency: expected a fraction in (0, 1], got 0");
  h100.latency.memory_efficiency = 0.8;
  h100.latency.step_overhead_s = -1;
  CHECK(error_of([&] {
          StepLatencyModel(llama, 1, model::KvCacheDtype::model, model::DType::bf16, h100);
        }) == "GPU profile 'h100-sxm-80gb': latency.step_overhead_s: expected a non-negative number, got -1");
}
