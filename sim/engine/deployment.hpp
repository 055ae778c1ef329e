#pragma once
// One rank of a deployment as the engines see it, the error a knob raises, and the defaults
// resolve() fills in: what every engine's configuration (<engine>_config.hpp) shares.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/allocator/alloc_config.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/engine/parallel_ranks.hpp"
#include "sim/model/model_config.hpp"

namespace headroom::engine {

// cuBLAS and cuBLASLt workspaces created by the first GEMM, outside PyTorch's allocator: 32 MiB
// each on sm90+ (docs/serving-memory-model.md §5, pytorch#120925), which is vLLM's measured non-torch
// growth of 0.07 GiB (vllm#21489). A scenario parameter: older GPUs and releases use less.
inline constexpr Bytes kDefaultNonTorchGrowth = 64 * MiB;

// Device memory the driver takes for each instantiated CUDA graph (cudaGraphExec: kernel parameters,
// per-node state), outside PyTorch's allocator, per captured batch size and decoder layer on the
// rank. vllm-project/vllm#23184 logs the free-memory drop of each size its lazy capture adds to
// Llama-3.1-8B-Instruct's (32 layers) shared pool: 6 MiB at sizes 272, 104, 96 and 88 (8 MiB at 112
// and 80), the floor where nothing else grew; 6 MiB / 32 = 0.1875 MiB (docs/serving-memory-model.md
// §1.5). Its sizes from 280 up (and #22897's) took 24-28 MiB, a part of which the logs do not
// separate. Depends on the driver and on the graphs' kernels: a scenario parameter
// (gpu.graph_exec_bytes_per_layer).
inline constexpr Bytes kDefaultGraphExecBytesPerLayer = 6 * MiB / 32;

// One rank of a deployment: the model, the GPU, the tensor-parallel size and the other parallel
// sizes, the rank simulated, and what the GPU holds before the engine starts.
struct Deployment {
  model::ModelConfig model;
  device::GpuProfile gpu;
  int tp = 1;
  Parallelism parallel;  // pp, dp, ep and the communicators' parameters (parallel_ranks.hpp)
  // The rank simulated (place_rank, engine_registry.hpp); absent: plain tensor parallelism, every
  // rank alike.
  std::optional<SimulatedRank> simulated_rank;
  // Capacity this process sees (cudaDeviceProp::totalGlobalMem; a MIG slice or a different
  // driver). Absent: the profile's capacity.
  std::optional<Bytes> visible;
  Bytes other_processes = 0;  // bytes other processes hold on the GPU during start-up
  Bytes non_torch_growth = kDefaultNonTorchGrowth;
  Bytes graph_exec_bytes_per_layer = kDefaultGraphExecBytesPerLayer;
  alloc::AllocatorConfig allocator;  // PYTORCH_CUDA_ALLOC_CONF
  // Debugging (`headroom run --check`): the allocator checks its invariants after every operation,
  // from the first weight tensor on (CachingAllocator::set_check_each_operation). Slow.
  bool check_allocator_each_operation = false;

  Bytes total() const { return visible ? *visible : gpu.capacity_bytes; }
  model::RankPlacement placement() const {
    return simulated_rank ? simulated_rank->placement : model::RankPlacement::tensor_parallel(tp);
  }
};

// A knob resolve() or start-up rejects. `key` is the knob's name (as in a scenario's `engine`
// mapping), so that the scenario layer can name the file's line; what() is the whole message.
class EngineConfigError : public InputError {
 public:
  EngineConfigError(std::string key, const std::string& message) : InputError(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Throws InputError naming the field: tp below 1 or not fitting the model, a zero capacity.
void validate_deployment(const Deployment& deployment);

// A default resolve() filled in: the knob's engine name, its value, and the rule it came from.
struct FilledDefault {
  std::string field;
  std::string value;
  std::string why;
  bool operator==(const FilledDefault&) const = default;
};

}  // namespace headroom::engine
