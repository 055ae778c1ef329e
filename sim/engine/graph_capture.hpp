#pragma once
// The CUDA-graph capture sequence the three engines share (docs/serving-memory-model.md §1.5, §2.3,
// §3): one graph per batch size, in the order given (the engines go largest first), each preceded
// by an eager warm-up in the default pool and captured into a private pool with the caching
// allocator's own pool rules (begin/end_allocate_to_pool: blocks freed during a capture are reused
// by the same and later captures of the pool; blocks still held at the end of a capture, the
// graph's outputs, stay allocated). The pool's size is whatever the allocator model makes of it.
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/model/allocation_program.hpp"
#include "sim/model/program_runner.hpp"

namespace headroom::engine {

// Where the graphs' memory goes.
enum class GraphPools {
  // One pool for every graph: vLLM's graph_pool_handle() (gpu_model_runner.py capture_model),
  // SGLang's get_global_graph_memory_pool (cuda_graph_runner.py), LightLLM's shared mempool
  // (cuda_graph.py). torch.cuda.graph_pool_handle() ids are (0, n).
  shared,
  // torch.cuda.graph(g) without `pool`: each CUDAGraph makes its own pool, id (graph id, 0)
  // (../shared/gpu graphs_private_s2: pools (1, 0) ... (7, 0)).
  one_per_graph,
};

struct GraphCaptureStep {
  // Run eagerly before the capture (the engines' warm-up runs); nullptr: none.
  const model::AllocationProgram* warmup = nullptr;
  // Captured into the private pool. Its persistent allocations are held after the capture (the
  // graph's outputs when the engine keeps them, persistent buffers created on first use).
  const model::AllocationProgram* capture = nullptr;
};

struct GraphCaptureOptions {
  GraphPools pools = GraphPools::shared;
  alloc::PoolId shared_pool{0, 1};  // with GraphPools::shared
  std::uint64_t first_graph_id = 1;  // with GraphPools::one_per_graph: the first pool is (id, 0)
  StreamId warmup_stream = 0;
  StreamId capture_stream = 0;
  // Device memory cudaGraphInstantiate takes outside the allocator after each capture (the driver's
  // graph exec, deployment.hpp kDefaultGraphExecBytesPerLayer); 0: none.
  Bytes exec_bytes_per_graph = 0;
};

struct GraphCaptureRun {
  bool completed = false;
  std::optional<alloc::OomInfo> oom;  // the failed allocation, when not completed
  std::size_t failed_step = 0;        // the step that failed
  bool failed_in_warmup = false;
  bool failed_in_instantiate = false;  // the driver had no room for the graph exec (no allocator OOM)
  Bytes peak_allocated = 0;           // most allocated above each run's start, over all runs
  Bytes exec_bytes = 0;               // the graph execs' driver memory, outside the allocator
  std::vector<alloc::PoolId> pools;   // the pools the graphs were captured into, in capture order
};

// Runs `steps` in order. `rng_state` receives the CUDA generator's graph-safe seed and offset
// tensors: two 8 B tensors at the first capture of the process only, on the capturing stream and
// outside the private pool (PyTorch CUDAGeneratorState::register_graph allocates them when the first
// graph registers; ../shared/gpu graphs_*_s2: two 8 B allocations before the first pool segment,
// none at later captures). Each capture's graph exec then joins the device's memory outside the
// allocator. Stops at the first OOM, transient blocks of the failed run freed.
GraphCaptureRun capture_graphs(alloc::CachingAllocator& allocator, model::SlotTable& slots,
                               std::vector<alloc::Block*>& rng_state, const std::vector<GraphCaptureStep>& steps,
                               const GraphCaptureOptions& options = {});

}  // namespace headroom::engine
