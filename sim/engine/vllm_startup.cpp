// vLLM v1 start-up (docs/serving-memory-model.md §1.1, §1.2, §1.5): gpu_worker.py init_device /
// determine_available_memory / initialize_from_config / compile_or_warm_up_model.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/checked.hpp"
#include "sim/engine/engine_limits.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/startup.hpp"
#include "sim/model/step_program.hpp"

namespace headroom::engine {

std::int64_t vllm_num_blocks(std::int64_t available_kv, Bytes page_size, int layers) {
  if (available_kv <= 0 || page_size == 0 || layers <= 0) return 0;
  return static_cast<std::int64_t>(static_cast<Bytes>(available_kv) / page_size / static_cast<Bytes>(layers));
}

Bytes vllm_request_kv_bytes(std::int64_t tokens, int block_size, Bytes page_size, int layers) {
  auto pages = static_cast<Bytes>((tokens + block_size - 1) / block_size);
  // Saturates: vLLM's Python ints do not wrap, so a request too long for 64 bits only ever fails the check.
  return saturating_mul(saturating_mul(pages, page_size), static_cast<Bytes>(layers));
}

std::int64_t vllm_estimate_max_model_len(std::int64_t available_kv, int block_size, Bytes page_size, int layers) {
  return vllm_num_blocks(available_kv, page_size, layers) * block_size;
}

namespace {

// vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run (§1.1).
std::string sampler_oom_message(std::int64_t num_reqs) {
  return fmt::format(
      "CUDA out of memory occurred when warming up sampler with {} dummy requests. Please try lowering "
      "`max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
      num_reqs);
}

// The sampler's tensors close the Tensor enumeration (allocation_program.hpp), from sample_hidden on.
bool is_sampler_tensor(model::Tensor t) {
  return static_cast<int>(t) >= static_cast<int>(model::Tensor::sample_hidden);
}

// vLLM prints GiB with two decimals in its start-up messages.
std::string gib(double bytes) { return fmt::format("{:.2f}", bytes / static_cast<double>(GiB)); }

// The capture passes of cudagraph_mode (§1.5): piecewise graphs for every size, full graphs for
// uniform-decode batches of at most max_num_seqs.
std::vector<std::vector<int>> graph_passes(const VllmConfig& c) {
  const std::vector<int>& sizes = *c.cudagraph_capture_sizes;
  std::vector<int> full_sizes;
  for (int s : sizes)
    if (s <= *c.max_num_seqs) full_sizes.push_back(s);
  switch (c.cudagraph_mode) {
    case CudaGraphMode::none: return {};
    case CudaGraphMode::piecewise:
    case CudaGraphMode::full: return {sizes};
    case CudaGraphMode::full_decode_only: return {full_sizes};
    case CudaGraphMode::full_and_piecewise: return {sizes, full_sizes};
  }
  return {};
}

}  // namespace

StartupResult vllm_startup(const Deployment& d, VllmConfig c, const StartupDirectives& directives) {
  StartupResult r;
  r.engine = model::Engine::vllm;
  r.filled = resolve(c, d);
  r.config = c;
  VllmFigures f;
  const std::int64_t T = *c.max_num_batched_tokens;
  const std::int64_t N = std::min(*c.max_num_seqs, T);
  const int block = *c.block_size;
  r.kv_block_tokens = block;
  r.max_running_requests = *c.max_num_seqs;
  r.sampler.kind = c.sampler;
  r.forward.attention = *c.attention_backend == VllmAttentionBackend::flashinfer ? model::AttentionBackend::flashinfer
                                                                                  : model::AttentionBackend::flash_attn;
  // vLLM #37442 cached a zeroed MLA decode output per layer, sized by max_num_seqs (§4c).
  r.forward.mla_decode_out = c.mla_decode_out;
  r.forward.mla_decode_out_rows = *c.max_num_seqs;
  // torch.compile's liveness unless enforce_eager runs the model code as plain Python, whose
  // decoder loop holds each layer's input until the layer returns (forward_program.hpp).
  r.forward.caller_holds_layer_input = c.enforce_eager;
  r.memory = make_serving_memory(d);
  ServingMemory& m = r.memory;
  alloc::CachingAllocator& a = *m.allocator;
  device::Device& dev = *m.device;
  auto finish = [&]() -> StartupResult {
    r.figures = f;
    finish_bytes(r);
    return std::move(r);
  };

  // init_device: the baseline snapshot and the utilisation check (§1.1).
  const Bytes total = dev.total();
  f.free_at_start = dev.free_bytes();
  f.requested = static_cast<Bytes>(std::floor(static_cast<double>(total) * c.gpu_memory_utilization));
  if (f.free_at_start < f.requested) {
    fail(r, StartupStage::memory_check,
         fmt::format("Free memory on device cuda:0 ({}/{} GiB) on startup is less than desired GPU memory "
                     "utilization ({}, {} GiB). Decrease GPU memory utilization or reduce GPU memory used by "
                     "other processes.",
                     gib(static_cast<double>(f.free_at_start)), gib(static_cast<double>(total)),
                     c.gpu_memory_utilization, gib(static_cast<double>(f.requested))));
    return finish();
  }
  auto non_torch_now = [&]() { return static_cast<std::int64_t>(total - dev.free_bytes() - a.reserved_bytes()); };
  const std::int64_t non_torch_baseline = non_torch_now();

  // load_model: model_memory_usage is the torch-allocated growth.
  if (!load_weights(r, d)) return finish();
  f.model_memory_usage = r.bytes.weights;

  model::KvLayout layout = model::kv_layout(d.model, engine_traits(model::Engine::vllm).kv_pool, c.kv_cache_dtype, d.tp);
  f.page_size = model::vllm_page_size_bytes(layout, block);
  const int L = layout.layers;
  // The first GEMM (the profile run, or a policy's own first forward) creates the cuBLAS workspaces.
  initialise_cublas(m, d);
  std::optional<std::int64_t> policy_tokens;
  if (directives.kv_sizer) {
    // A start-up policy decides the capacity in place of determine_available_memory.
    KvSizingInputs in{d, r};
    in.free_before_weights = f.free_at_start;
    in.free_after_weights = dev.free_bytes();
    in.non_torch_at_start = static_cast<Bytes>(non_torch_baseline);
    in.kv_bytes_per_token = f.page_size * static_cast<Bytes>(L) / static_cast<Bytes>(block);
    in.kv_block_tokens = block;
    in.prefill_tokens = T;
    in.batch_seqs = N;
    in.max_graph_batch = c.cudagraph_mode == CudaGraphMode::none || c.cudagraph_capture_sizes->empty() ? 0 : c.cudagraph_capture_sizes->back();
    for (const std::vector<int>& pass : graph_passes(c)) in.graph_sizes.insert(in.graph_sizes.end(), pass.begin(), pass.end());
    const Bytes workspace = *c.attention_backend == VllmAttentionBackend::flashinfer ? model::kVllmFlashInferWorkspace : 0;
    in.workspace_bytes = [workspace](std::int64_t) { return workspace; };
    policy_tokens = decide_kv_tokens(directives, in, 0);
    if (!policy_tokens) return finish();
    f.available_kv = static_cast<std::int64_t>(vllm_request_kv_bytes(*policy_tokens, block, f.page_size, L));
  } else {
    // determine_available_memory: profile_run inside memory_profiling (§1.1). Attention metadata is
    // absent, so no attention workspace is created or measured.
    a.empty_cache();
    a.reset_peak_stats();
    const Bytes allocated_before = a.allocated_bytes();
    model::ForwardOptions profile_forward = r.forward;
    profile_forward.attention_workspace = 0;
    model::AllocationProgram profile =
        model::step_program(d.model, model::ForwardShape{T, N, 0, d.tp}, profile_forward, r.sampler);
    model::ProgramRun run;
    if (!run_eager(r, profile, run)) {
      if (is_sampler_tensor(profile.ops[run.oom_op].tensor)) {
        r.oom = *run.oom;
        fail(r, StartupStage::profile_run, sampler_oom_message(N));
      } else {
        fail_oom(r, StartupStage::profile_run, *run.oom, d);
      }
      return finish();
    }
    const Bytes peak = static_cast<Bytes>(a.stats().allocated_bytes[alloc::kAll].peak);
    a.empty_cache();
    f.torch_peak_increase = peak - allocated_before;
    f.non_torch_increase = static_cast<Bytes>(std::max<std::int64_t>(0, non_torch_now() - non_torch_baseline));
    const std::int64_t non_kv =
        static_cast<std::int64_t>(f.model_memory_usage + f.torch_peak_increase + f.non_torch_increase);
    f.available_kv = c.kv_cache_memory_bytes ? static_cast<std::int64_t>(*c.kv_cache_memory_bytes)
                                             : static_cast<std::int64_t>(f.requested) - non_kv;
    r.log.push_back(fmt::format("Available KV cache memory: {} GiB", gib(static_cast<double>(f.available_kv))));

  }
  // get_kv_cache_config (§1.2): pages per layer, then the one-request check.
  if (f.available_kv <= 0) {
    fail(r, StartupStage::kv_cache_sizing,
         "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
         "the engine.");
    return finish();
  }
  const Bytes needed = vllm_request_kv_bytes(*c.max_model_len, block, f.page_size, L);
  if (needed > static_cast<Bytes>(f.available_kv) && !directives.skip_capacity_checks) {
    fail(r, StartupStage::kv_cache_sizing,
         fmt::format("To serve at least one request with the model's max seq len ({}), {} GiB KV cache is needed, "
                     "which is larger than the available KV cache memory ({} GiB). Based on the available memory, "
                     "the estimated maximum model length is {}. Try increasing `gpu_memory_utilization` or "
                     "decreasing `max_model_len` when initializing the engine.",
                     *c.max_model_len,
                     gib(static_cast<double>((*c.max_model_len + block - 1) / block) * static_cast<double>(f.page_size) *
                         static_cast<double>(L)),
                     gib(static_cast<double>(f.available_kv)),
                     vllm_estimate_max_model_len(f.available_kv, block, f.page_size, L)));
    return finish();
  }
  r.kv_blocks = policy_tokens ? *policy_tokens / block
                : c.num_gpu_blocks_override ? *c.num_gpu_blocks_override
                                            : vllm_num_blocks(f.available_kv, f.page_size, L);
  // The scheduler holds a few words per block (engine_limits.hpp); beyond the limit only a larger
  // block_size (or less memory) makes the cache simulable.
  if (r.kv_blocks > limits::kMaxKvBlocks)
    throw EngineConfigError(
        c.num_gpu_blocks_override ? "num_gpu_blocks_override" : c.kv_cache_memory_bytes ? "kv_cache_memory_bytes" : "block_size",
        fmt::format("vllm: the KV cache would hold {} blocks of {} tokens, above the limit of {} (docs/limits.md); "
                    "raise block_size or give the cache less memory",
                    r.kv_blocks, block, limits::kMaxKvBlocks));
  r.kv_tokens = r.kv_blocks * block;
  f.max_concurrency = static_cast<double>(r.kv_blocks) /
                      static_cast<double>((*c.max_model_len + block - 1) / block);
  r.log.push_back(fmt::format("GPU KV cache size: {} tokens", r.kv_tokens));
  r.log.push_back(
      fmt::format("Maximum concurrency for {} tokens per request: {:.2f}x", *c.max_model_len, f.max_concurrency));

  // initialize_kv_cache_tensors: one zeroed int8 tensor of page_size × num_blocks per layer.
  if (!allocate_kv_cache(r, d, L, f.page_size * static_cast<Bytes>(r.kv_blocks))) return finish();

  // compile_or_warm_up_model: the first warm-up with attention metadata builds the backend's
  // workspace (FlashInfer 256 MiB, §5), then graphs are captured into one private pool (§1.5).
  if (*c.attention_backend == VllmAttentionBackend::flashinfer) {
    r.forward.attention_workspace = model::kVllmFlashInferWorkspace;
    if (!allocate_attention_workspace(r, d, r.forward.attention_workspace)) return finish();
  }
  const Bytes free_before_capture = dev.free_bytes();
  const std::vector<std::vector<int>> passes = graph_passes(c);
  for (const std::vector<int>& pass : passes) {
    if (!capture_decode_graphs(r, d, pass)) return finish();
    r.graph_batch_sizes.insert(r.graph_batch_sizes.end(), pass.begin(), pass.end());
  }
  std::sort(r.graph_batch_sizes.begin(), r.graph_batch_sizes.end());
  r.graph_batch_sizes.erase(std::unique(r.graph_batch_sizes.begin(), r.graph_batch_sizes.end()),
                            r.graph_batch_sizes.end());
  const Bytes free_after_capture = dev.free_bytes();
  f.cudagraph_memory = free_before_capture > free_after_capture ? free_before_capture - free_after_capture : 0;
  if (!passes.empty())
    r.log.push_back(fmt::format("Graph capturing finished, took {} GiB", gib(static_cast<double>(f.cudagraph_memory))));
  // The suggestion logged after capture, with its 150 MiB redundancy (§1.1); it changes nothing.
  f.suggested_kv_cache_memory =
      static_cast<std::int64_t>(f.requested) -
      static_cast<std::int64_t>(f.model_memory_usage + f.torch_peak_increase + f.non_torch_increase +
                                f.cudagraph_memory + 150 * MiB);

  // The post-capture dummy sampler run over N requests; its blocks stay cached (§1.1).
  model::AllocationProgram sampler = model::sampler_program(d.model, N, d.tp, r.sampler);
  model::ProgramRun run;
  if (!run_eager(r, sampler, run)) {
    r.oom = *run.oom;
    fail(r, StartupStage::sampler_warmup, sampler_oom_message(N));
    return finish();
  }
  if (!allocate_canary(r, d, directives.canary)) return finish();
  r.ok = true;
  r.stage = StartupStage::serving;
  return finish();
}

}  // namespace headroom::engine
