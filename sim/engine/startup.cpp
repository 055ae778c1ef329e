// The start-up steps the engines share, and the dispatch to the engine's own (engine_registry.hpp).
#include "sim/engine/startup.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/engine_registry.hpp"
#include "sim/engine/graph_capture.hpp"
#include "sim/model/sampler_program.hpp"
#include "sim/model/step_program.hpp"
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
    case StartupStage::rotary_cache: return "rotary cache";
    case StartupStage::attention_workspace: return "attention workspace";
    case StartupStage::cuda_graph_capture: return "CUDA graph capture";
    case StartupStage::sampler_warmup: return "sampler warm-up";
    case StartupStage::max_len_check: return "max-length check";
    case StartupStage::canary: return "canary";
    case StartupStage::serving: return "serving";
  }
  return "?";
}

StartupResult start_engine(const Deployment& deployment, const EngineConfig& config,
                           const StartupDirectives& directives) {
  return engine_traits(config).start(deployment, config, directives);
}

ServingMemory make_serving_memory(const Deployment& d) {
  device::DeviceSpec spec = device::device_spec(d.gpu);
  spec.total = d.total();
  spec.other_processes = d.other_processes;
  ServingMemory m;
  m.device = std::make_unique<device::Device>(spec);
  m.allocator = std::make_unique<alloc::CachingAllocator>(*m.device, d.allocator);
  m.allocator->set_check_each_operation(d.check_allocator_each_operation);
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

void place_rank(Deployment& d, const EngineConfig& config) {
  const EngineTraits& traits = engine_traits(config);
  check_parallelism(d, traits.parallel, traits.name);
  d.simulated_rank.reset();
  if (d.parallel.pp == 1 && d.parallel.dp == 1 && d.parallel.ep == 1) return;  // plain TP: every rank alike
  d.simulated_rank = most_loaded_rank(d, traits.parallel, traits.kv_pool, traits.kv_cache_dtype(config));
}

bool init_distributed(StartupResult& r, const Deployment& d) {
  ParallelStartup& p = r.parallel;
  p.placement = d.placement();
  p.rank = d.simulated_rank ? d.simulated_rank->rank : 0;
  p.why = d.simulated_rank ? d.simulated_rank->why : "every rank holds the same shapes; rank 0 stands for all";
  if (d.simulated_rank) r.forward.placement = p.placement;
  p.communicators = communicator_memory(d, engine_traits(r.engine).parallel);
  device::Device& gpu = *r.memory.device;
  gpu.set_context_bytes(gpu.spec().context_bytes + p.communicators.outside_torch());
  for (const Communicator& c : p.communicators.communicators)
    r.log.push_back(fmt::format("NCCL communicator '{}' of {} ranks: {} of connection buffers", c.group, c.ranks,
                                format_bytes(c.bytes)));
  if (p.communicators.custom_all_reduce_rank_data > 0) {
    alloc::CachingAllocator& a = *r.memory.allocator;
    alloc::Block* b = a.malloc(p.communicators.custom_all_reduce_rank_data);
    if (!b) {
      fail_oom(r, StartupStage::memory_check, *a.last_oom(), d);
      return false;
    }
    r.memory.custom_all_reduce_rank_data = b;
    r.log.push_back(fmt::format("custom all-reduce: {} of IPC buffers, {} rank_data",
                                format_bytes(p.communicators.custom_all_reduce),
                                format_bytes(p.communicators.custom_all_reduce_rank_data)));
  }
  return true;
}

bool load_weights(StartupResult& r, const Deployment& d, std::optional<model::RotaryRules> rotary) {
  model::WeightOptions options;
  options.tp = d.tp;
  if (d.simulated_rank) options.placement = d.simulated_rank->placement;
  model::WeightList list = model::model_weights(d.model, options);
  // vLLM and SGLang construct the model on the device: a layer's attention builds its rotary table
  // among the weights (model/rotary_cache.hpp), so it shares their segments.
  const std::vector<model::RotaryTable> tables = rotary ? model::rotary_tables(d.model, *rotary)
                                                        : std::vector<model::RotaryTable>{};
  const std::vector<std::ptrdiff_t> at = model::rotary_load_positions(list, tables);
  alloc::CachingAllocator& a = *r.memory.allocator;
  r.memory.weights.reserve(list.tensors.size());
  Bytes before = a.allocated_bytes();
  auto allocate = [&](Bytes bytes, std::vector<alloc::Block*>& into) {
    alloc::Block* b = a.malloc(bytes);
    if (!b) {
      fail_oom(r, StartupStage::load_weights, *a.last_oom(), d);
      return false;
    }
    into.push_back(b);
    return true;
  };
  auto tables_at = [&](std::ptrdiff_t i) {
    for (std::size_t k = 0; k < tables.size(); ++k) {
      if (at[k] != i) continue;
      if (!allocate(tables[k].bytes(), r.memory.rotary_cache)) return false;
      r.bytes.rotary_cache += r.memory.rotary_cache.back()->size;
    }
    return true;
  };
  for (std::size_t i = 0; i < list.tensors.size(); ++i)
    if (!tables_at(static_cast<std::ptrdiff_t>(i)) || !allocate(list.tensors[i].bytes(), r.memory.weights)) return false;
  if (!tables_at(static_cast<std::ptrdiff_t>(list.tensors.size()))) return false;
  // What the allocator holds for the weights: the growth (unsplit blocks included) less the tables.
  r.bytes.weights = a.allocated_bytes() - before - r.bytes.rotary_cache;
  r.log.push_back(fmt::format("Model loading took {} memory ({} tensors, rotary cache {})",
                              format_bytes(r.bytes.weights + r.bytes.rotary_cache), list.tensors.size(),
                              format_bytes(r.bytes.rotary_cache)));
  return true;
}

bool allocate_rotary_tables(StartupResult& r, const Deployment& d, const std::vector<model::RotaryTable>& tables,
                            StartupStage stage) {
  alloc::CachingAllocator& a = *r.memory.allocator;
  for (const model::RotaryTable& t : tables) {
    alloc::Block* b = a.malloc(t.bytes());
    if (!b) {
      fail_oom(r, stage, *a.last_oom(), d);
      return false;
    }
    r.memory.rotary_cache.push_back(b);
    r.bytes.rotary_cache += b->size;
  }
  return true;
}

bool allocate_kv_cache(StartupResult& r, const Deployment& d, int tensors, Bytes bytes_each) {
  if (bytes_each == 0) return true;
  alloc::CachingAllocator& a = *r.memory.allocator;
  for (int i = 0; i < tensors; ++i) {
    alloc::Block* b = a.malloc(bytes_each);
    if (!b) {
      fail_oom(r, StartupStage::kv_cache_allocation, *a.last_oom(), d);
      return false;
    }
    r.memory.kv_cache.push_back(b);
    r.bytes.kv_cache += b->size;
  }
  return true;
}

bool allocate_request_pool(StartupResult& r, const Deployment& d, Bytes bytes) {
  alloc::CachingAllocator& a = *r.memory.allocator;
  alloc::Block* b = a.malloc(bytes);
  if (!b) {
    fail_oom(r, StartupStage::request_pool, *a.last_oom(), d);
    return false;
  }
  r.memory.request_pool.push_back(b);
  r.bytes.request_pool = b->size;
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

bool allocate_engine_buffer(StartupResult& r, const Deployment& d, Bytes bytes, StartupStage stage) {
  if (bytes == 0) return true;
  alloc::CachingAllocator& a = *r.memory.allocator;
  alloc::Block* b = a.malloc(bytes);
  if (!b) {
    fail_oom(r, stage, *a.last_oom(), d);
    return false;
  }
  r.memory.engine_buffers.push_back(b);
  r.bytes.workspaces += b->size;
  return true;
}

bool run_eager(StartupResult& r, const model::AllocationProgram& program, model::ProgramRun& run) {
  model::run_program(*r.memory.allocator, program, *r.memory.slots, run);
  r.bytes.activations_peak = std::max(r.bytes.activations_peak, run.peak_allocated);
  return run.completed;
}

namespace {

// One decode graph's program: the forward, then (SGLang, LightLLM) the logits processor.
model::AllocationProgram decode_graph_program(const Deployment& d, int size, const model::ForwardOptions& forward,
                                              std::optional<model::GraphLogitsOutput> logits) {
  const model::ForwardShape shape{size, size, size, d.tp};
  if (!logits) return model::forward_program(d.model, shape, forward);
  model::ProgramBuilder builder(fmt::format("decode graph {} bs={} tp={}", d.model.name, size, d.tp), d.model.layers);
  const std::uint32_t hidden = model::emit_forward(builder, d.model, shape, forward);
  model::emit_graph_logits(builder, d.model, size, d.tp, *logits);
  builder.set_layer(model::kNoLayer);
  builder.free(hidden);
  return builder.finish();
}

}  // namespace

bool capture_decode_graphs(StartupResult& r, const Deployment& d, const std::vector<int>& sizes,
                           const DecodeGraph& graph) {
  if (sizes.empty()) return true;
  // torch.cuda.graph_pool_handle() ids are (0, n); one pool shared by every graph (§1.5, §2.3, §3).
  GraphCaptureOptions options;
  r.memory.graph_pool = options.shared_pool;
  std::vector<int> order(sizes);
  std::sort(order.begin(), order.end(), std::greater<>());  // largest first, as all three engines
  // A graph that keeps its logits (LightLLM) warms up with the same forward, whose output dies.
  const bool kept = graph.logits == model::GraphLogitsOutput::kept;
  const std::optional<model::GraphLogitsOutput> warmup_logits =
      kept ? std::optional<model::GraphLogitsOutput>(model::GraphLogitsOutput::dropped) : graph.logits;
  std::vector<model::AllocationProgram> programs;
  programs.reserve(2 * order.size());
  std::vector<GraphCaptureStep> steps;
  steps.reserve(order.size());
  for (int size : order) {
    programs.push_back(decode_graph_program(d, size, graph.forward, graph.logits));
    const model::AllocationProgram* capture = &programs.back();
    const model::AllocationProgram* warmup = capture;
    if (kept) {
      programs.push_back(decode_graph_program(d, size, graph.forward, warmup_logits));
      warmup = &programs.back();
    }
    steps.push_back(GraphCaptureStep{warmup, capture});
  }
  // Each graph exec's driver memory, by the decoder layers on this rank's stage (deployment.hpp).
  const model::TensorParallelShard stage = model::rank_shard(d.model, d.placement());
  options.exec_bytes_per_graph = d.graph_exec_bytes_per_layer * static_cast<Bytes>(stage.end_layer - stage.first_layer);
  const GraphCaptureRun run =
      capture_graphs(*r.memory.allocator, *r.memory.slots, r.memory.graph_rng_state, steps, options);
  r.bytes.activations_peak = std::max(r.bytes.activations_peak, run.peak_allocated);
  r.bytes.graph_execs += run.exec_bytes;
  if (run.failed_in_instantiate) {
    // CUDAGraph::capture_end's AT_CUDA_CHECK(cudaGraphInstantiateWithFlags(...)): a CUDA error, not
    // the caching allocator's message.
    fail(r, StartupStage::cuda_graph_capture,
         fmt::format("CUDA error: out of memory (cudaGraphInstantiate of the batch-size {} graph: its exec "
                     "takes {:.2f} MiB outside PyTorch, {:.2f} MiB free)",
                     order[run.failed_step], static_cast<double>(options.exec_bytes_per_graph) / MiB,
                     static_cast<double>(r.memory.device->free_bytes()) / MiB));
    return false;
  }
  if (!run.completed) {
    fail_oom(r, StartupStage::cuda_graph_capture, *run.oom, d);
    return false;
  }
  return true;
}

namespace {

std::string op_name(const model::AllocationProgram& program, std::size_t op) {
  const model::ProgramOp& o = program.ops[op];
  return o.layer >= 0 ? fmt::format("{} (layer {})", model::tensor_name(o.tensor), o.layer)
                      : std::string(model::tensor_name(o.tensor));
}

}  // namespace

ProfileMeasurement profile_forward(StartupResult& r, const Deployment& d, std::int64_t tokens, std::int64_t seqs) {
  alloc::CachingAllocator& a = *r.memory.allocator;
  ProfileMeasurement p;
  a.empty_cache();
  a.reset_peak_stats();
  const Bytes allocated_before = a.allocated_bytes();
  const Bytes reserved_before = a.reserved_bytes();
  initialise_cublas(r.memory, d);
  model::ForwardOptions forward = r.forward;
  forward.attention_workspace = 0;  // attention metadata is absent in a profile run (§1.1)
  model::AllocationProgram program =
      model::step_program(d.model, model::ForwardShape{tokens, seqs, 0, d.tp}, forward, r.sampler);
  model::ProgramRun run;
  p.ok = run_eager(r, program, run);
  const alloc::AllocatorStats& st = a.stats();
  p.peak_allocated_increase = static_cast<Bytes>(st.allocated_bytes[alloc::kAll].peak) - allocated_before;
  p.peak_reserved_increase = static_cast<Bytes>(st.reserved_bytes[alloc::kAll].peak) - reserved_before;
  p.fragmentation = static_cast<Bytes>(st.reserved_bytes[alloc::kAll].peak - st.allocated_bytes[alloc::kAll].peak);
  if (!p.ok) {
    p.oom = run.oom;
    p.oom_tensor = op_name(program, run.oom_op);
  }
  a.empty_cache();
  return p;
}

model::SamplerOptions graph_sampler(const StartupResult& r) {
  model::SamplerOptions s = r.sampler;
  s.logits_from_graph = r.graph_computes_logits;
  return s;
}

StressMeasurement stress(StartupResult& r, const Deployment& d, std::int64_t prefill_tokens, std::int64_t decode_seqs) {
  alloc::CachingAllocator& a = *r.memory.allocator;
  StressMeasurement s;
  model::ProgramRun run;
  model::SamplerOptions greedy;
  greedy.kind = model::SamplerKind::greedy;
  model::AllocationProgram prefill =
      model::step_program(d.model, model::ForwardShape{prefill_tokens, 1, 0, d.tp}, r.forward, greedy);
  if (!run_eager(r, prefill, run)) {
    s.oom = run.oom;
    s.oom_tensor = "prefill: " + op_name(prefill, run.oom_op);
  } else if (decode_seqs > 0) {
    const bool graph = !r.graph_batch_sizes.empty() && decode_seqs <= r.graph_batch_sizes.back();
    model::AllocationProgram decode =
        graph ? (model::runs_sampler(r.forward) ? model::sampler_program(d.model, decode_seqs, d.tp, graph_sampler(r))
                                                : model::AllocationProgram{})
              : model::step_program(d.model, model::ForwardShape{decode_seqs, decode_seqs, decode_seqs, d.tp},
                                    r.forward, r.sampler);
    if (!run_eager(r, decode, run)) {
      s.oom = run.oom;
      s.oom_tensor = "decode: " + op_name(decode, run.oom_op);
    }
  }
  s.ok = !s.oom;
  s.peak_reserved = static_cast<Bytes>(a.stats().reserved_bytes[alloc::kAll].peak);
  return s;
}

std::optional<Bytes> estimate_cudagraph_memory(StartupResult& r, const Deployment& d, const std::vector<int>& sizes) {
  if (sizes.empty()) return Bytes{0};
  alloc::CachingAllocator& a = *r.memory.allocator;
  // Each estimate graph goes into its own scratch pool (not the serving graphs' (0, 1)), so each
  // measures a whole graph's memory; that is why the extrapolation over-estimates a shared pool.
  std::vector<int> order(sizes);
  std::sort(order.begin(), order.end(), std::greater<>());
  Bytes growth[2] = {0, 0};
  model::ProgramRun run;
  model::RunOptions options;
  for (std::size_t i = 0; i < std::min<std::size_t>(2, order.size()); ++i) {
    const alloc::PoolId scratch{0, 2 + i};
    options.graph_pool = scratch;
    const Bytes before = a.private_pool_reserved_bytes();
    const std::int64_t size = order[i];
    model::AllocationProgram program = model::forward_program(d.model, model::ForwardShape{size, size, size, d.tp}, r.forward);
    model::run_program(a, program, *r.memory.slots, run, options);
    growth[i] = a.private_pool_reserved_bytes() - before;
    a.release_pool(scratch);
    if (!run.completed) return std::nullopt;
  }
  const auto n = static_cast<Bytes>(order.size());
  return growth[0] + growth[1] * (n - 1);
}

std::optional<std::int64_t> decide_kv_tokens(const StartupDirectives& directives, KvSizingInputs& inputs,
                                             std::int64_t engine_tokens) {
  if (!directives.kv_sizer) return engine_tokens;
  if (inputs.startup.engine != model::Engine::vllm) inputs.engine_tokens = engine_tokens;
  KvSizing decision = directives.kv_sizer(inputs);
  if (const auto* why = std::get_if<std::string>(&decision)) {
    fail(inputs.startup, StartupStage::kv_cache_sizing, *why);
    return std::nullopt;
  }
  inputs.startup.kv_sized_by_policy = true;
  const std::int64_t tokens = inputs.whole_blocks(std::get<std::int64_t>(decision));
  inputs.startup.log.push_back(fmt::format("KV capacity decided by the start-up policy: {} tokens", tokens));
  return tokens;
}

bool allocate_canary(StartupResult& r, const Deployment& d, Bytes bytes) {
  if (bytes == 0) return true;
  alloc::CachingAllocator& a = *r.memory.allocator;
  alloc::Block* b = a.malloc(bytes);
  if (!b) {
    fail_oom(r, StartupStage::canary, *a.last_oom(), d);
    return false;
  }
  r.memory.canary = b;
  r.bytes.canary = b->size;
  r.log.push_back(fmt::format("canary of {} allocated", format_bytes(bytes)));
  return true;
}

void initialise_cublas(ServingMemory& memory, const Deployment& d) {
  if (memory.cublas_initialised) return;
  memory.cublas_initialised = true;
  memory.device->set_context_bytes(memory.device->spec().context_bytes + d.non_torch_growth);
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
