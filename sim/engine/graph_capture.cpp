// The capture sequence: warm-up, the generator's graph-safe RNG state once, the capture into a pool.
#include "sim/engine/graph_capture.hpp"

#include <algorithm>

namespace headroom::engine {

GraphCaptureRun capture_graphs(alloc::CachingAllocator& allocator, model::SlotTable& slots,
                               std::vector<alloc::Block*>& rng_state, const std::vector<GraphCaptureStep>& steps,
                               const GraphCaptureOptions& options) {
  GraphCaptureRun out;
  out.pools.reserve(steps.size());
  model::ProgramRun run;
  const auto failed = [&](std::size_t step, bool in_warmup, const std::optional<alloc::OomInfo>& oom) {
    out.failed_step = step;
    out.failed_in_warmup = in_warmup;
    out.oom = oom;
    return out;
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const GraphCaptureStep& step = steps[i];
    if (step.warmup) {
      model::RunOptions eager;
      eager.stream = options.warmup_stream;
      model::run_program(allocator, *step.warmup, slots, run, eager);
      out.peak_allocated = std::max(out.peak_allocated, run.peak_allocated);
      if (!run.completed) return failed(i, true, run.oom);
    }
    // CUDAGeneratorState::register_graph: the seed and offset tensors of the first graph (one
    // int64 each), allocated at capture_begin on the capturing stream before the pool is entered.
    if (rng_state.empty()) {
      for (int t = 0; t < 2; ++t) {
        alloc::Block* holder = allocator.malloc(8, options.capture_stream);
        if (!holder) return failed(i, false, allocator.last_oom());
        rng_state.push_back(holder);
      }
    }
    const alloc::PoolId pool = options.pools == GraphPools::shared
                                   ? options.shared_pool
                                   : alloc::PoolId{options.first_graph_id + i, 0};
    out.pools.push_back(pool);
    model::RunOptions capture;
    capture.graph_pool = pool;
    capture.stream = options.capture_stream;
    model::run_program(allocator, *step.capture, slots, run, capture);
    out.peak_allocated = std::max(out.peak_allocated, run.peak_allocated);
    if (!run.completed) return failed(i, false, run.oom);
    // cudaGraphInstantiate (PyTorch CUDAGraph::capture_end) allocates the exec in the driver.
    device::Device& gpu = allocator.device();
    if (options.exec_bytes_per_graph > gpu.free_bytes()) {
      out.failed_in_instantiate = true;
      return failed(i, false, std::nullopt);
    }
    gpu.set_context_bytes(gpu.spec().context_bytes + options.exec_bytes_per_graph);
    out.exec_bytes += options.exec_bytes_per_graph;
  }
  out.completed = true;
  return out;
}

}  // namespace headroom::engine
