#include "sim/latency/step_latency.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/model/tensor_parallel.hpp"
#include "sim/model/weights.hpp"

namespace headroom::latency {

Bytes Gemm::weight_bytes() const {
  return matrix_bytes * static_cast<Bytes>(layers) * static_cast<Bytes>(experts);
}

Seconds step_seconds(const StepTerms& t, const device::LatencyCoefficients& c) {
  return step_time_by_term(t, c).total();
}

StepTime step_time_by_term(const StepTerms& t, const device::LatencyCoefficients& c) {
  StepTime s;
  s.gemm = t.gemm_compute / c.gemm_peak_efficiency +
           t.gemm_ramp * c.gemm_half_efficiency_tokens / c.gemm_peak_efficiency +
           t.gemm_memory / c.memory_efficiency;
  s.attention = t.attention_compute / c.attention_efficiency + t.attention_memory / c.memory_efficiency +
                t.attention_serial * c.attention_token_s;
  s.overhead = t.eager * c.step_overhead_s + t.graph * c.graph_overhead_s + t.kernels * c.kernel_floor_s;
  return s;
}

void add_gemm_terms(StepTerms& t, double compute, double rows_per_weight, double memory,
                    const device::LatencyCoefficients& c) {
  const double ramp = compute / rows_per_weight;
  // eff(M) = peak_eff · M/(M + half), so FLOPs/(peak·eff) = compute/peak_eff + ramp·half/peak_eff.
  const double compute_s = (compute + ramp * c.gemm_half_efficiency_tokens) / c.gemm_peak_efficiency;
  if (compute_s >= memory / c.memory_efficiency) {
    t.gemm_compute += compute;
    t.gemm_ramp += ramp;
  } else {
    t.gemm_memory += memory;
  }
}

void add_attention_terms(StepTerms& t, double compute, double memory, double serial_tokens,
                         const device::LatencyCoefficients& c) {
  const double compute_s = compute / c.attention_efficiency, memory_s = memory / c.memory_efficiency;
  const double serial_s = serial_tokens * c.attention_token_s;
  if (serial_s > compute_s && serial_s > memory_s)
    t.attention_serial += serial_tokens;
  else if (compute_s >= memory_s)
    t.attention_compute += compute;
  else
    t.attention_memory += memory;
}

namespace {

void check_fraction(const device::GpuProfile& p, std::string_view key, double value) {
  if (!(value > 0 && value <= 1))
    throw InputError(fmt::format("GPU profile '{}': latency.{}: expected a fraction in (0, 1], got {}", p.name, key,
                                 value));
}

void check_non_negative(const device::GpuProfile& p, std::string_view key, double value) {
  if (!(value >= 0 && std::isfinite(value)))
    throw InputError(fmt::format("GPU profile '{}': latency.{}: expected a non-negative number, got {}", p.name, key,
                                 value));
}

}  // namespace

StepLatencyModel::StepLatencyModel(const model::ModelConfig& config, int tp, model::KvCacheDtype kv_dtype,
                                   model::DType weight_dtype, const device::GpuProfile& profile)
    : profile_(profile), coefficients_(profile.latency) {
  const auto& c = coefficients_;
  check_fraction(profile, "gemm_peak_efficiency", c.gemm_peak_efficiency);
  check_fraction(profile, "attention_efficiency", c.attention_efficiency);
  check_fraction(profile, "memory_efficiency", c.memory_efficiency);
  check_non_negative(profile, "gemm_half_efficiency_tokens", c.gemm_half_efficiency_tokens);
  check_non_negative(profile, "step_overhead_s", c.step_overhead_s);
  check_non_negative(profile, "graph_overhead_s", c.graph_overhead_s);
  check_non_negative(profile, "kernel_floor_s", c.kernel_floor_s);
  check_non_negative(profile, "attention_token_s", c.attention_token_s);
  if (!(profile.bandwidth_bytes_per_s > 0) || !(profile.dense_bf16_flops_per_s > 0))
    throw InputError(fmt::format("GPU profile '{}': bandwidth and bf16 peak must be positive", profile.name));
  if (weight_dtype == model::DType::fp32)
    throw InputError(fmt::format("model '{}': weight dtype fp32 is not modelled for step latency (the GPU profile "
                                 "gives bf16 and fp8 peaks only)",
                                 config.name));
  activation_bytes_ = model::dtype_bytes(config.dtype == model::DType::fp32 ? model::DType::bf16 : config.dtype);

  // kv_layout checks the TP size; the KV bytes per token are the same in every engine's layout
  // (kv_layout.hpp), and the engine has checked the dtype at start-up, so any layout stands for all.
  const model::KvLayout kv = model::kv_layout(config, model::KvPoolRules{"any engine", true}, kv_dtype, tp);
  kv_bytes_per_token_ = kv.bytes_per_token;
  add_gemms(config, tp, weight_dtype);

  // Attention FLOPs per query-key pair and layer: a multiply-add (2 FLOPs) per element of the
  // score q·k and of the weighted sum p·v, for every query head on this rank.
  const model::TensorParallelShard shard = model::tensor_parallel_shard(config, tp);
  const double heads = shard.q_heads;
  const double layers = config.layers;
  layers_ = layers;
  if (config.is_mla()) {
    // Prefill runs MLA as ordinary attention over decompressed K/V (qk_nope + qk_rope wide keys,
    // v_head_dim wide values); decode runs it "absorbed", over the latent (kv_lora_rank +
    // qk_rope wide keys, kv_lora_rank wide values): vLLM attention/backends/mla/common.py.
    const double qk = config.qk_nope_head_dim + config.qk_rope_head_dim;
    prefill_flops_per_pair_ = layers * 2 * heads * (qk + config.v_head_dim);
    decode_flops_per_pair_ =
        layers * 2 * heads * (config.kv_lora_rank + config.qk_rope_head_dim + config.kv_lora_rank);
  } else {
    prefill_flops_per_pair_ = layers * 2 * heads * 2 * config.head_dim;
    decode_flops_per_pair_ = prefill_flops_per_pair_;
  }

  // Expected experts a step touches (step_time below) use ln(1 - k/E), taken once here.
  log_miss_.reserve(gemms_.size());
  for (const Gemm& g : gemms_) {
    log_miss_.push_back(g.experts > 1 ? portable_log1p(-static_cast<double>(g.top_k) / g.experts) : 0.0);
    any_mla_rows_ = any_mla_rows_ || g.rows == GemmRows::mla_kv;
  }
}

// The GEMMs of one forward pass on rank 0, with the shapes weights.cpp gives the same modules
// (vLLM model classes: llama.py, qwen2.py, qwen3.py, qwen3_moe.py, mixtral.py, deepseek_v2.py).
void StepLatencyModel::add_gemms(const model::ModelConfig& c, int tp, model::DType weight_dtype) {
  const model::TensorParallelShard shard = model::tensor_parallel_shard(c, tp);
  const Bytes wbytes = model::dtype_bytes(weight_dtype);
  const Bytes model_bytes = model::dtype_bytes(c.dtype == model::DType::fp32 ? model::DType::bf16 : c.dtype);
  // FP8 weights run on FP8 tensor cores where the GPU has them (vLLM's W8A8 FP8 GEMMs); without
  // them (A100) vLLM runs FP8 checkpoints weight-only (Marlin), computing in bf16. NVFP4 likewise
  // with FP4 tensor cores (Blackwell; modelopt.py / compressed_tensors_w4a4_nvfp4.py CUTLASS FP4
  // GEMMs), else Marlin's W4A16. The integer formats and MXFP4 experts dequantize to 16-bit.
  using Method = model::WeightQuantization::Method;
  const Method method = c.quantization.method;
  const bool fp8_format = method == Method::fp8_block || method == Method::fp8_tensor || method == Method::fp8_channel;
  const double bf16_peak = profile_.dense_bf16_flops_per_s;
  double quantized_peak = bf16_peak;
  if ((fp8_format || (method == Method::none && weight_dtype == model::DType::fp8)) && profile_.dense_fp8_flops_per_s)
    quantized_peak = *profile_.dense_fp8_flops_per_s;
  if (method == Method::nvfp4 && profile_.dense_fp4_flops_per_s) quantized_peak = *profile_.dense_fp4_flops_per_s;

  int moe_layers = 0;
  for (int l = 0; l < c.layers; ++l) moe_layers += c.is_moe_layer(l) ? 1 : 0;
  const int dense_layers = c.layers - moe_layers;

  auto add = [&](std::string_view name, GemmRows rows, std::int64_t in, std::int64_t out, int layers,
                 bool quantized = true, int experts = 1, int top_k = 1) {
    if (layers == 0 || in == 0 || out == 0) return;
    Gemm g;
    g.name = name;
    g.rows = rows;
    g.in = in;
    g.out = out;
    const bool expert = experts > 1;
    // MXFP4 quantizes the experts only (weights.cpp); the other formats every quantizable weight.
    const bool stored_quantized = quantized && method != Method::none && (method != Method::mxfp4 || expert);
    if (stored_quantized)
      g.matrix_bytes = model::linear_weight_bytes(c, out, in, expert);
    else
      g.matrix_bytes = static_cast<Bytes>(in) * static_cast<Bytes>(out) * (quantized ? wbytes : model_bytes);
    g.peak_flops_per_s = stored_quantized || (quantized && method == Method::none) ? quantized_peak : bf16_peak;
    g.layers = layers;
    g.experts = experts;
    g.top_k = top_k;
    gemms_.push_back(g);
  };

  const std::int64_t h = c.hidden;
  if (c.is_mla()) {
    const std::int64_t heads = shard.q_heads;
    const std::int64_t qk = c.qk_nope_head_dim + c.qk_rope_head_dim;
    const std::int64_t latent = c.kv_lora_rank + c.qk_rope_head_dim;
    if (c.q_lora_rank > 0) {
      add("fused_qkv_a_proj", GemmRows::tokens, h, c.q_lora_rank + latent, c.layers);
      add("q_b_proj", GemmRows::tokens, c.q_lora_rank, heads * qk, c.layers);
    } else {
      add("q_proj", GemmRows::tokens, h, heads * qk, c.layers);
      add("kv_a_proj_with_mqa", GemmRows::tokens, h, latent, c.layers);
    }
    // Prefill decompresses the latent of the new tokens and of the cached context through
    // kv_b_proj (vLLM mla/common.py _compute_prefill_context); decode multiplies the absorbed
    // halves of the same weight with its queries and outputs, one row per sequence.
    add("kv_b_proj", GemmRows::mla_kv, c.kv_lora_rank, heads * (c.qk_nope_head_dim + c.v_head_dim), c.layers);
    add("o_proj", GemmRows::tokens, heads * c.v_head_dim, h, c.layers);
  } else {
    const std::int64_t q = static_cast<std::int64_t>(shard.q_heads) * c.head_dim;
    const std::int64_t kv = static_cast<std::int64_t>(shard.kv_heads) * c.head_dim;
    add("qkv_proj", GemmRows::tokens, h, q + 2 * kv, c.layers);
    add("o_proj", GemmRows::tokens, q, h, c.layers);
  }
  if (dense_layers > 0) {
    add("gate_up_proj", GemmRows::tokens, h, 2 * (c.intermediate / tp), dense_layers);
    add("down_proj", GemmRows::tokens, c.intermediate / tp, h, dense_layers);
  }
  if (moe_layers > 0) {
    // The router is unquantized and replicated (weights.cpp).
    add("gate", GemmRows::tokens, h, c.experts, moe_layers, false);
    if (c.shared_experts > 0) {
      const std::int64_t width = static_cast<std::int64_t>(c.shared_experts) * c.moe_intermediate / tp;
      add("shared_experts.gate_up_proj", GemmRows::tokens, h, 2 * width, moe_layers);
      add("shared_experts.down_proj", GemmRows::tokens, width, h, moe_layers);
    }
    const std::int64_t n = c.moe_intermediate / tp;
    add("experts.w13", GemmRows::tokens, h, 2 * n, moe_layers, true, c.experts, c.experts_per_token);
    add("experts.w2", GemmRows::tokens, n, h, moe_layers, true, c.experts, c.experts_per_token);
  }
  // The vocab-parallel head (the embedding matrix when tied), unquantized.
  add("lm_head", GemmRows::sampled, h, shard.vocab, 1, false);
}

Bytes StepLatencyModel::gemm_weight_bytes() const {
  Bytes total = 0;
  for (const Gemm& g : gemms_) total += g.weight_bytes();
  return total;
}

void StepLatencyModel::add_gemm_step_terms(StepTerms& t, double& kernels, std::int64_t token_count,
                                           std::int64_t sampled_count, std::int64_t mla_count,
                                           const device::LatencyCoefficients& c) const {
  const double bandwidth = profile_.bandwidth_bytes_per_s;
  const double act = static_cast<double>(activation_bytes_);
  const double token_rows = static_cast<double>(token_count);
  const double sampled_rows = static_cast<double>(sampled_count);
  const double mla_rows = static_cast<double>(mla_count);

  kernels = 0;
  for (std::size_t i = 0; i < gemms_.size(); ++i) {
    const Gemm& g = gemms_[i];
    const double rows = g.rows == GemmRows::tokens ? token_rows : g.rows == GemmRows::sampled ? sampled_rows : mla_rows;
    if (rows <= 0) continue;
    const double in = static_cast<double>(g.in), out = static_cast<double>(g.out);
    // Routed experts: rows·k (token, expert) pairs; with routing taken as uniform and independent
    // per token, an expert is missed by all rows with probability (1 - k/E)^rows, so a step
    // touches E·(1 - (1 - k/E)^rows) experts and reads only their weights. Each touched expert's
    // GEMM has rows·k / touched rows on average. Dense layers: one "expert", all rows.
    double routed = rows, touched = 1;
    if (g.experts > 1) {
      routed = rows * g.top_k;
      touched = g.experts * -portable_expm1(rows * log_miss_[i]);
    }
    const double layers = g.layers;
    const double flops = 2 * routed * in * out * layers;
    const double weight_bytes = touched * static_cast<double>(g.matrix_bytes) * layers;
    const double activation_bytes = routed * (in + out) * act * layers;  // read x, write y
    const double rows_per_weight = routed / touched;

    add_gemm_terms(t, flops / g.peak_flops_per_s, rows_per_weight, (weight_bytes + activation_bytes) / bandwidth, c);
    kernels += static_cast<double>(g.layers);  // a FusedMoE weight is one kernel per layer, whatever the experts
  }
}

void StepLatencyModel::add_attention_step_terms(StepTerms& t, double gemm_kernels, const Batch& b,
                                                const device::LatencyCoefficients& c) const {
  const double bandwidth = profile_.bandwidth_bytes_per_s;
  // Attention, prefill and decode each on its own roofline (FlashAttention-style kernels: scores
  // stay on chip, so HBM traffic is the KV cache read once plus the new tokens' KV written).
  auto attention = [&](double flops, double kv_tokens, double serial_tokens) {
    add_attention_terms(t, flops / profile_.dense_bf16_flops_per_s,  // attention runs in bf16
                        kv_tokens * static_cast<double>(kv_bytes_per_token_) / bandwidth, serial_tokens, c);
  };
  // The serial side (attention_token_s) is measured on decode kernels only: one sequence's scan of
  // its context, in every layer; the batch holds sums, so the mean context stands for each one's.
  if (b.prefill_tokens > 0)
    attention(b.prefill_attention_pairs * prefill_flops_per_pair_,
              static_cast<double>(b.prefill_cached + 2 * b.prefill_tokens), 0);
  if (b.decode_sequences > 0)
    attention(static_cast<double>(b.decode_context + b.decode_sequences) * decode_flops_per_pair_,
              static_cast<double>(b.decode_context + 2 * b.decode_sequences),
              layers_ * (static_cast<double>(b.decode_context) / static_cast<double>(b.decode_sequences) + 1));

  // Per-step overhead: scheduling, input preparation and kernel launches (eager), or one graph
  // replay (vLLM/SGLang capture decode batches as CUDA graphs to cut the launches). An eager step
  // also pays each kernel's floor: one per GEMM weight (per touched expert) and per attention.
  (b.cuda_graph ? t.graph : t.eager) = 1;
  if (!b.cuda_graph && c.kernel_floor_s > 0)
    t.kernels = gemm_kernels + layers_ * ((b.prefill_tokens > 0 ? 1 : 0) + (b.decode_sequences > 0 ? 1 : 0));
}

StepTerms StepLatencyModel::terms(const Batch& b, const device::LatencyCoefficients& c) const {
  StepTerms t;
  if (b.empty()) return t;
  double kernels = 0;
  add_gemm_step_terms(t, kernels, b.tokens(), b.sampled_sequences(), mla_rows(b), c);
  add_attention_step_terms(t, kernels, b, c);
  return t;
}

GemmTermCache::GemmTermCache() : entries_(1024) {}

Seconds StepLatencyModel::step_time(const Batch& batch, GemmTermCache& cache) const {
  if (batch.empty()) return step_time(batch);
  const std::int64_t tokens = batch.tokens(), sampled = batch.sampled_sequences();
  const std::int64_t mla = any_mla_rows_ ? mla_rows(batch) : 0;
  // Direct-mapped: the slot of the rows' mixed bits; a different step's rows overwrite it.
  const std::uint64_t mixed = static_cast<std::uint64_t>(tokens) * 0x9e3779b97f4a7c15ULL ^
                              static_cast<std::uint64_t>(sampled) * 0xbf58476d1ce4e5b9ULL ^
                              static_cast<std::uint64_t>(mla) * 0x94d049bb133111ebULL;
  GemmTermCache::Entry& e = cache.entries_[(mixed >> 40) & (cache.entries_.size() - 1)];
  if (e.tokens != tokens || e.sampled != sampled || e.mla_rows != mla) {
    e.tokens = tokens;
    e.sampled = sampled;
    e.mla_rows = mla;
    e.terms = StepTerms{};
    add_gemm_step_terms(e.terms, e.kernels, tokens, sampled, mla, coefficients_);
  }
  StepTerms t = e.terms;
  add_attention_step_terms(t, e.kernels, batch, coefficients_);
  const Seconds kernels = step_seconds(t, coefficients_);
  return communication_ ? kernels + communication_->seconds(batch) : kernels;
}

Seconds StepLatencyModel::step_time(const Batch& batch) const {
  const Seconds kernels = step_seconds(terms(batch, coefficients_), coefficients_);
  return communication_ ? kernels + communication_->seconds(batch) : kernels;
}

StepTime StepLatencyModel::step_time_by_term(const Batch& batch) const {
  StepTime t = latency::step_time_by_term(terms(batch, coefficients_), coefficients_);
  if (communication_) t.communication = communication_->seconds(batch);
  return t;
}

}  // namespace headroom::latency
