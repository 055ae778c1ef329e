#pragma once
// The time of the collectives one step of a parallel deployment runs, from the GPU profile's
// interconnect (device::Interconnect: the link's bandwidth, its bus efficiency and latencies) and
// the engine's choice of all-reduce (vLLM's custom all-reduce or NCCL). S is a message's bytes on
// each rank, n the ranks, busBw = one direction's bandwidth × bus_efficiency:
//
//   NCCL ring all-reduce   nccl_latency + 2(n-1)·hop_latency + 2(n-1)/n · S / busBw
//   NCCL ring all-gather   nccl_latency +  (n-1)·hop_latency +  (n-1)   · S / busBw
//   NCCL send/recv         nccl_latency +        hop_latency +            S / busBw
//   custom one-shot        custom_all_reduce_latency     + (n-1)   · S / busBw
//   custom two-shot        2 · custom_all_reduce_latency + 2(n-1)/n · S / busBw
//
// 2(n-1)/n and (n-1)/n are nccl-tests' bus-bandwidth factors (doc/PERFORMANCE.md: a ring
// all-reduce moves 2(n-1)/n·S over each rank's link, an all-gather of n pieces of S (n-1)·S); the
// step count is NCCL's latency model (src/graph/tuning.cc: nsteps = 2(n-1) for all-reduce, n-1 for
// all-gather). vLLM csrc/custom_all_reduce.cuh: the one-shot kernel reads every peer's whole input
// and reduces it locally; the two-shot kernel reduce-scatters, then all-gathers, with a barrier
// after each stage.
#include <optional>

#include "sim/core/units.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/latency/batch.hpp"
#include "sim/model/model_config.hpp"

namespace headroom::latency {

// What the engine decides about one rank's communication (sim/scenario passes it from the engine's
// start-up: its parallel sizes and whether it set up its custom all-reduce).
struct ParallelCommunication {
  int tp = 1;  // ranks of each tensor-parallel all-reduce
  int pp = 1;  // pipeline stages: pp - 1 hand-overs of the hidden states per step
  // The engine's custom all-reduce is set up for the TP group (vLLM, SGLang, LightLLM at TP 2, 4,
  // 6 or 8 unless disabled) and takes inputs below `custom_all_reduce_max_size`.
  bool custom_all_reduce = false;
  Bytes custom_all_reduce_max_size = 0;
  bool operator==(const ParallelCommunication&) const = default;
};

enum class AllReduceAlgorithm { nccl_ring, one_shot, two_shot };

// Which all-reduce the engine runs on `bytes` (per rank). vLLM custom_all_reduce.py should_custom_ar:
// the custom kernel where it is set up, the input is below its max size, and the group is 2 ranks
// or fully connected (more than two PCIe-only GPUs keep NCCL); csrc/custom_all_reduce.cuh picks
// one-shot for 2 ranks, or for ≤ 4 ranks below 512 KiB and ≤ 8 ranks below 256 KiB, else two-shot.
AllReduceAlgorithm all_reduce_algorithm(double bytes, const ParallelCommunication& p,
                                        const device::Interconnect& link);

Seconds ring_all_reduce_seconds(double bytes, int ranks, const device::Interconnect& link);
// `bytes`: each rank's piece; the result holds n of them.
Seconds ring_all_gather_seconds(double bytes, int ranks, const device::Interconnect& link);
// One hand-over between neighbouring pipeline stages; `ranks` the stages' span sizes the link.
Seconds send_recv_seconds(double bytes, int ranks, const device::Interconnect& link);
Seconds custom_all_reduce_seconds(double bytes, int ranks, AllReduceAlgorithm algorithm,
                                  const device::Interconnect& link);
// The all-reduce the engine runs (all_reduce_algorithm) and its time; 0 for one rank.
Seconds all_reduce_seconds(double bytes, const ParallelCommunication& p, const device::Interconnect& link);

// The communication of one step on one rank, for Llama-style tensor parallelism as vLLM, SGLang and
// LightLLM run it: the vocab-parallel embedding's all-reduce (vocab_parallel_embedding.py), two per
// decoder layer (after the attention output projection and after the MLP or MoE down projection,
// RowParallelLinear reduce_results; a MoE layer's shared experts are added before its one
// all-reduce, deepseek_v2.py), the logits' all-gather (logits_processor.py _gather_logits), and
// with pipeline parallelism pp - 1 hand-overs of the hidden states and the residual
// (IntermediateTensors in llama.py, deepseek_v2.py).
class StepCommunication {
 public:
  // Throws InputError where the profile has no interconnect.
  StepCommunication(const model::ModelConfig& config, const ParallelCommunication& p, const device::GpuProfile& gpu);
  // Seconds the step spends communicating; allocation-free.
  Seconds seconds(const Batch& batch) const;
  const ParallelCommunication& parallel() const { return parallel_; }

 private:
  ParallelCommunication parallel_;
  device::Interconnect link_;
  double all_reduces_ = 0;          // per step: 1 + 2 · decoder layers
  double hidden_bytes_ = 0;         // per token: hidden × activation bytes
  double logits_piece_bytes_ = 0;   // per sampled row on one rank: padded vocabulary / tp × activation bytes
};

}  // namespace headroom::latency
