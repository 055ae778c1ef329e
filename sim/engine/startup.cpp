// The start-up steps the three engines share, and the dispatch by engine.
#include "sim/engine/startup.hpp"

#include <algorithm>
#include <functional>
#include <utility>

#include <fmt/format.h>

#include "sim/model/weights.hpp"

namespace headroom::engine {

std::string_view startup_stage_name(StartupStage stage) {
  switch (stage) {
    case StartupStage::memory_check: return "memory check";
    case StartupStage::load_weights: return "load weights";
    case StartupStage::profile_run: return "profile run";
    case StartupStage::kv_cache_sizing: return "KV cache sizing";
    case StartupStage::kv_cache_allocation: return "KV cache allocation";
    case StartupStage::request_pool: return "request pool";
    case StartupStage::attention_workspace: return "attention workspace";
    case StartupStage::cuda_graph_capture: return "CUDA graph capture";
    case StartupStage::sampler_warmup: return "sampler warm-up";
    case StartupStage::max_len_check: return "max-length check";
    case StartupStage::serving: return "serving";
  }
  return "?";
}

StartupResult start_engine(const Deployment& deployment, const EngineConfig& config) {
  return std::visit(
      [&](const auto& c) -> StartupResult {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, VllmConfig>) return vllm_startup(deployment, c);
        else if constexpr (std::is_same_v<C, SglangConfig>) return sglang_startup(deployment, c);
        else return lightllm_startup(deployment, c);
      },
      config);
}

ServingMemory make_serving_memory(const Deployment& d) {
  device::DeviceSpec spec = device::device_spec(d.gpu);
  spec.total = d.total();
  spec.other_processes = d.other_processes;
  ServingMemory m;
  m.device = std::make_unique<device::Device>(spec);
  m.allocator = std::make_unique<alloc::CachingAllocator>(*m.device, d.allocator);
  m.slots = std::make_unique<model::SlotTable>();
  return m;
}

void fail(StartupResult& r, StartupStage stage, std::string message) {
  r.ok = false;
  r.stage = stage;
  r.failure = std::move(message);
  r.log.push_back(fmt::format("start-up failed during {}: {}", startup_stage_name(stage), r.failure));
}

void fail_oom(StartupResult& r, StartupStage stage, const alloc::OomInfo& oom, const Deployment& d) {
  r.oom = oom;
  fail(r, stage, oom.message(d.gpu.vendor == "amd"));
}

bool load_weights(StartupResult& r, const Deployment& d) {
  model::WeightOptions options;
  options.tp = d.tp;
  model::WeightList list = model::model_weights(d.model, options);
  alloc::CachingAllocator& a = *r.memory.allocator;
  r.memory.weights.reserve(list.tensors.size());
  Bytes before = a.allocated_bytes();
  for (const model::WeightTensor& t : list.tensors) {
    alloc::Block* b = a.malloc(t.bytes());
    if (!b) {
      fail_oom(r, StartupStage::load_weights, *a.last_oom(), d);
      return false;
    }
    r.memory.weights.push_back(b);
  }
  r.bytes.weights = a.allocated_bytes() - before;
  r.log.push_back(fmt::format("Model loading took {} memory ({} tensors)", format_bytes(r.bytes.weights),
                              list.tensors.size()));
  return true;
}

bool allocate_attention_workspace(StartupResult& r, const Deployment& d, Bytes bytes) {
  if (bytes == 0) return true;
  alloc::CachingAllocator& a = *r.memory.allocator;
  alloc::Block* b = a.malloc(bytes);
  if (!b) {
    fail_oom(r, StartupStage::attention_workspace, *a.last_oom(), d);
    return false;
  }
  r.memory.slots->add_persistent(model::persistent_key(model::Tensor::attention_workspace, model::kNoLayer), b);
  r.bytes.workspaces += b->size;
  return true;
}

bool run_eager(StartupResult& r, const model::AllocationProgram& program, model::ProgramRun& run) {
  model::run_program(*r.memory.allocator, program, *r.memory.slots, run);
  r.bytes.activations_peak = std::max(r.bytes.activations_peak, run.peak_allocated);
  return run.completed;
}

bool capture_decode_graphs(StartupResult& r, const Deployment& d, const std::vector<int>& sizes) {
  if (sizes.empty()) return true;
  alloc::CachingAllocator& a = *r.memory.allocator;
  // torch.cuda.graph_pool_handle() ids are (0, n); one pool shared by every graph (§1.5, §2.3, §3).
  const alloc::PoolId pool{0, 1};
  r.memory.graph_pool = pool;
  std::vector<int> order(sizes);
  std::sort(order.begin(), order.end(), std::greater<>());  // largest first, as all three engines
  model::ProgramRun run;
  for (int size : order) {
    model::ForwardShape shape{size, size, size, d.tp};
    model::AllocationProgram program = model::forward_program(d.model, shape, r.forward);
    if (!run_eager(r, program, run)) {  // warm-up outside the graph
      fail_oom(r, StartupStage::cuda_graph_capture, *run.oom, d);
      return false;
    }
    // CUDAGraph's seed and offset holders (caching-allocator-spec §4: two 512 B blocks per capture).
    for (int i = 0; i < 2; ++i) {
      alloc::Block* holder = a.malloc(8);
      if (!holder) {
        fail_oom(r, StartupStage::cuda_graph_capture, *a.last_oom(), d);
        return false;
      }
      r.memory.graph_rng_state.push_back(holder);
    }
    model::RunOptions options;
    options.graph_pool = pool;
    model::run_program(a, program, *r.memory.slots, run, options);
    r.bytes.activations_peak = std::max(r.bytes.activations_peak, run.peak_allocated);
    if (!run.completed) {
      fail_oom(r, StartupStage::cuda_graph_capture, *run.oom, d);
      return false;
    }
  }
  return true;
}

Bytes measured_free(ServingMemory& memory) {
  memory.allocator->empty_cache();
  return memory.device->free_bytes();
}

void finish_bytes(StartupResult& r) {
  const ServingMemory& m = r.memory;
  r.bytes.reserved = m.allocator->reserved_bytes();
  r.bytes.device_free = m.device->free_bytes();
  r.bytes.non_torch = m.device->spec().context_bytes;
  r.bytes.graph_pool = m.allocator->private_pool_reserved_bytes();
}

}  // namespace headroom::engine
