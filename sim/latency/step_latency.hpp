#pragma once
// The time of one engine step on one tensor-parallel rank, from what the step computes (batch.hpp)
// and a GPU profile (sim/device/gpu_profile.hpp). Every kernel is costed by the roofline: the
// larger of its FLOPs at an achieved fraction of peak and its bytes at an achieved fraction of
// HBM bandwidth. The fractions and the per-step overheads are the profile's `latency`
// coefficients, so calibration (fit.hpp) replaces them without touching this code.
//
//   step = Σ_GEMM max(FLOPs / (peak · eff(rows)), bytes / (bandwidth · memory_efficiency))
//        + Σ_{prefill, decode} max(attention FLOPs / (peak · attention_efficiency),
//                                  KV bytes / (bandwidth · memory_efficiency))
//        + step_overhead_s (eager)  or  graph_overhead_s (replayed CUDA graph)
//   eff(M) = gemm_peak_efficiency · M / (M + gemm_half_efficiency_tokens)
//
// With tensor or pipeline parallelism, the step's collectives (collective.hpp: all-reduces, the
// logits' all-gather, the pipeline's hand-overs) are added over the profile's interconnect.
// Left out, each small next to the terms above: element-wise kernels (norms, rotary embedding,
// SiLU, residual adds), the embedding gather and sampling.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/latency/batch.hpp"
#include "sim/latency/collective.hpp"
#include "sim/model/dtype.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/model_config.hpp"

namespace headroom::latency {

// Which rows of the step multiply a GEMM's weight.
enum class GemmRows {
  tokens,   // every prefill token and decode sequence
  sampled,  // one per sequence that samples (lm_head)
  mla_kv,   // MLA kv_b_proj: also the cached context of prefill chunks (see step_latency.cpp)
};

// One linear layer (or one FusedMoE expert weight) on this rank: y[M, out] = x[M, in] · W^T.
struct Gemm {
  std::string_view name;           // the vLLM module name: qkv_proj, o_proj, gate_up_proj, ...
  GemmRows rows = GemmRows::tokens;
  std::int64_t in = 0;             // per rank (and per expert)
  std::int64_t out = 0;
  Bytes matrix_bytes = 0;          // one layer's (one expert's) weight as stored, scales included
  double peak_flops_per_s = 0;     // the tensor-core peak its dtype runs at
  int layers = 1;                  // decoder layers holding it (1 for lm_head)
  int experts = 1;                 // > 1: routed experts, `top_k` of them per token
  int top_k = 1;
  Bytes weight_bytes() const;      // all layers and experts on this rank
};

// A step's time split into terms, each a quantity fixed by the batch, model and GPU peaks, in
// seconds at 100 % efficiency, times one coefficient:
//   step = gemm_compute / gemm_peak_efficiency
//        + gemm_ramp · gemm_half_efficiency_tokens / gemm_peak_efficiency
//        + (gemm_memory + attention_memory) / memory_efficiency
//        + attention_compute / attention_efficiency
//        + attention_serial · attention_token_s
//        + eager · step_overhead_s + graph · graph_overhead_s
//        + kernels · kernel_floor_s
// Which side of each roofline a kernel is on depends on the coefficients, so terms() takes them.
// The model is linear in (1/peak_eff, half/peak_eff, 1/memory_eff, 1/attention_eff, overheads)
// once those sides are fixed; fit.hpp relies on that.
struct StepTerms {
  double gemm_compute = 0;       // Σ FLOPs / peak over compute-bound GEMMs
  double gemm_ramp = 0;          // Σ FLOPs / (peak · rows per weight) over the same GEMMs
  double gemm_memory = 0;        // Σ (weight + activation bytes) / bandwidth over memory-bound GEMMs
  double attention_compute = 0;  // attention FLOPs / bf16 peak where compute-bound
  double attention_memory = 0;   // KV bytes / bandwidth where memory-bound
  double eager = 0;              // 1 for a non-empty step launched kernel by kernel
  double graph = 0;              // 1 for a non-empty step replayed from a CUDA graph
  double attention_serial = 0;   // KV tokens one sequence scans, per attention kernel, where that side is slowest
  double kernels = 0;            // kernels launched one by one (an eager step's GEMMs and attention)
};

// One GEMM-like kernel on its roofline, added to `t`: `compute` its FLOPs / peak, `rows_per_weight`
// the rows each weight element multiplies (GEMM M), `memory` its bytes / bandwidth. It lands on
// the compute side (gemm_compute, gemm_ramp) or the memory side (gemm_memory), whichever is
// slower under `c`. Used for a step's GEMMs and for a single measured GEMM (fit.hpp).
void add_gemm_terms(StepTerms& t, double compute, double rows_per_weight, double memory,
                    const device::LatencyCoefficients& c);
// An attention kernel (FLOPs / bf16 peak, KV bytes / bandwidth, KV tokens one of its sequences
// scans in order), added on its slowest side.
void add_attention_terms(StepTerms& t, double compute, double memory, double serial_tokens,
                         const device::LatencyCoefficients& c);

// The step time by term (seconds), for reports.
struct StepTime {
  Seconds gemm = 0;
  Seconds attention = 0;
  Seconds overhead = 0;
  Seconds communication = 0;  // collectives over the interconnect (tp or pp above 1)
  Seconds total() const { return gemm + attention + overhead + communication; }
};

// Evaluates `terms` with `c` (the formula above).
Seconds step_seconds(const StepTerms& terms, const device::LatencyCoefficients& c);
StepTime step_time_by_term(const StepTerms& terms, const device::LatencyCoefficients& c);

class StepLatencyModel;

// The GEMM half of a step's terms depends only on the step's rows (tokens, sampled sequences and,
// for MLA, the rows of kv_b_proj), and a serving run repeats them (a decode batch of n sequences
// recurs every few steps): a direct-mapped table of those halves under the model's own
// coefficients, filled as steps come. Sized once; lookups allocate nothing. One per serving run,
// used with one model (not shared between threads).
class GemmTermCache {
 public:
  GemmTermCache();

 private:
  friend class StepLatencyModel;
  struct Entry {
    std::int64_t tokens = -1;  // -1: empty
    std::int64_t sampled = 0;
    std::int64_t mla_rows = 0;
    StepTerms terms;           // gemm_compute, gemm_ramp, gemm_memory
    double kernels = 0;        // GEMM kernels an eager step launches
  };
  std::vector<Entry> entries_;
};

class StepLatencyModel {
 public:
  // The quantizable linear weights of a quantized checkpoint (config.quantization) are read as
  // their format stores them (model::linear_weight_bytes: packed values and scales) and multiply
  // at the peak the engine computes them at: FP8 formats at the fp8 peak where the GPU has one
  // (vLLM's W8A8 FP8 GEMMs; weight-only Marlin, at the bf16 peak, without), NVFP4 at the fp4 peak
  // where the GPU has one (CUTLASS W4A4; Marlin W4A16 without), GPTQ, AWQ, compressed-tensors
  // wNa16 and MXFP4 experts at the 16-bit peak (their kernels dequantize to 16-bit activations).
  // Unquantized checkpoints: `weight_dtype` (the model dtype, or fp8 for online FP8
  // quantization). Routers and lm_head keep the model dtype.
  // Throws InputError for a TP size the model does not allow, an fp32 weight dtype (the profile
  // has no fp32 peak) and coefficients outside their range.
  StepLatencyModel(const model::ModelConfig& config, int tp, model::KvCacheDtype kv_dtype,
                   model::DType weight_dtype, const device::GpuProfile& profile);

  // Seconds of one step with the profile's coefficients. Allocation-free; an empty batch takes 0.
  Seconds step_time(const Batch& batch) const;
  // The same seconds, bit for bit, with the GEMM terms taken from `cache` when it has the step's
  // rows (the serving loop's path).
  Seconds step_time(const Batch& batch, GemmTermCache& cache) const;
  StepTime step_time_by_term(const Batch& batch) const;
  // The terms under coefficients `c` (fit.hpp evaluates candidates with it). Communication is
  // not among them: the fit's measurements are of one GPU.
  StepTerms terms(const Batch& batch, const device::LatencyCoefficients& c) const;

  // Adds the step's collectives (collective.hpp) to step_time. Without it, or at tp 1 and pp 1,
  // a step is its kernels alone.
  void set_communication(const StepCommunication& communication) { communication_ = communication; }
  const std::optional<StepCommunication>& communication() const { return communication_; }

  const std::vector<Gemm>& gemms() const { return gemms_; }
  // GEMM weight bytes on this rank: what a step that touches every expert reads once.
  Bytes gemm_weight_bytes() const;
  Bytes kv_bytes_per_token() const { return kv_bytes_per_token_; }  // all layers on this rank
  const device::LatencyCoefficients& coefficients() const { return coefficients_; }
  const device::GpuProfile& profile() const { return profile_; }

 private:
  void add_gemms(const model::ModelConfig& config, int tp, model::DType weight_dtype);
  // terms() in two halves: the GEMMs (a function of the rows alone; `kernels` counts their eager
  // launches), then attention and overheads on top of them.
  void add_gemm_step_terms(StepTerms& t, double& kernels, std::int64_t token_rows, std::int64_t sampled_rows,
                           std::int64_t mla_rows, const device::LatencyCoefficients& c) const;
  void add_attention_step_terms(StepTerms& t, double gemm_kernels, const Batch& b,
                                const device::LatencyCoefficients& c) const;
  static std::int64_t mla_rows(const Batch& b) { return b.prefill_tokens + b.prefill_cached + b.decode_sequences; }

  device::GpuProfile profile_;
  device::LatencyCoefficients coefficients_;
  std::vector<Gemm> gemms_;
  std::optional<StepCommunication> communication_;
  std::vector<double> log_miss_;    // per GEMM: ln(1 - top_k/experts), for the experts touched
  double layers_ = 0;               // decoder layers: one attention kernel each
  bool any_mla_rows_ = false;       // a GEMM has GemmRows::mla_kv rows (else they key nothing)
  Bytes activation_bytes_ = 2;
  Bytes kv_bytes_per_token_ = 0;
  double prefill_flops_per_pair_ = 0;  // attention FLOPs per query-key pair, all layers
  double decode_flops_per_pair_ = 0;
};

}  // namespace headroom::latency
