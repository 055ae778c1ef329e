#include "sim/latency/collective.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/model/dtype.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::latency {

namespace {

// vllm csrc/custom_all_reduce.cuh CustomAllreduce::allreduce (REDUCE_CASE): the one-shot kernel
// up to these sizes on a fully connected group, the two-shot kernel above.
constexpr double kOneShotBelowUpTo4Ranks = 512.0 * 1024;
constexpr double kOneShotBelowUpTo8Ranks = 256.0 * 1024;

}  // namespace

AllReduceAlgorithm all_reduce_algorithm(double bytes, const ParallelCommunication& p,
                                        const device::Interconnect& link) {
  const int n = p.tp;
  const bool reachable = n == 2 || link.fully_connected(n);
  if (!p.custom_all_reduce || !reachable || !(bytes < static_cast<double>(p.custom_all_reduce_max_size)))
    return AllReduceAlgorithm::nccl_ring;
  if (n == 2) return AllReduceAlgorithm::one_shot;
  if ((n <= 4 && bytes < kOneShotBelowUpTo4Ranks) || (n <= 8 && bytes < kOneShotBelowUpTo8Ranks))
    return AllReduceAlgorithm::one_shot;
  return AllReduceAlgorithm::two_shot;
}

Seconds ring_all_reduce_seconds(double bytes, int ranks, const device::Interconnect& link) {
  if (ranks <= 1) return 0;
  const double n = ranks;
  return link.nccl_latency_s + 2 * (n - 1) * link.hop_latency_s + 2 * (n - 1) / n * bytes / link.bus_bytes_per_s(ranks);
}

Seconds ring_all_gather_seconds(double bytes, int ranks, const device::Interconnect& link) {
  if (ranks <= 1) return 0;
  const double n = ranks;
  return link.nccl_latency_s + (n - 1) * link.hop_latency_s + (n - 1) * bytes / link.bus_bytes_per_s(ranks);
}

Seconds send_recv_seconds(double bytes, int ranks, const device::Interconnect& link) {
  return link.nccl_latency_s + link.hop_latency_s + bytes / link.bus_bytes_per_s(ranks);
}

Seconds custom_all_reduce_seconds(double bytes, int ranks, AllReduceAlgorithm algorithm,
                                  const device::Interconnect& link) {
  const double n = ranks;
  if (algorithm == AllReduceAlgorithm::one_shot)
    return link.custom_all_reduce_latency_s + (n - 1) * bytes / link.bus_bytes_per_s(ranks);
  return 2 * link.custom_all_reduce_latency_s + 2 * (n - 1) / n * bytes / link.bus_bytes_per_s(ranks);
}

Seconds all_reduce_seconds(double bytes, const ParallelCommunication& p, const device::Interconnect& link) {
  if (p.tp <= 1) return 0;
  const AllReduceAlgorithm a = all_reduce_algorithm(bytes, p, link);
  return a == AllReduceAlgorithm::nccl_ring ? ring_all_reduce_seconds(bytes, p.tp, link)
                                            : custom_all_reduce_seconds(bytes, p.tp, a, link);
}

StepCommunication::StepCommunication(const model::ModelConfig& config, const ParallelCommunication& p,
                                     const device::GpuProfile& gpu)
    : parallel_(p) {
  if (!gpu.interconnect)
    throw InputError(fmt::format("GPU profile '{}' gives no interconnect: the step latency of tp {} × pp {} needs "
                                 "its link and bandwidth (docs/models-and-gpus.md \"Interconnect\")",
                                 gpu.name, p.tp, p.pp));
  link_ = *gpu.interconnect;
  const double act = static_cast<double>(
      model::dtype_bytes(config.dtype == model::DType::fp32 ? model::DType::bf16 : config.dtype));
  all_reduces_ = 1 + 2.0 * config.layers;
  hidden_bytes_ = static_cast<double>(config.hidden) * act;
  logits_piece_bytes_ = static_cast<double>(model::tensor_parallel_shard(config, p.tp).vocab) * act;
}

Seconds StepCommunication::seconds(const Batch& b) const {
  if (b.empty()) return 0;
  const double tokens = static_cast<double>(b.tokens());
  Seconds s = 0;
  if (parallel_.tp > 1) {
    s += all_reduces_ * all_reduce_seconds(tokens * hidden_bytes_, parallel_, link_);
    s += ring_all_gather_seconds(static_cast<double>(b.sampled_sequences()) * logits_piece_bytes_, parallel_.tp, link_);
  }
  if (parallel_.pp > 1)
    s += (parallel_.pp - 1) * send_recv_seconds(2 * tokens * hidden_bytes_, parallel_.tp * parallel_.pp, link_);
  return s;
}

}  // namespace headroom::latency
