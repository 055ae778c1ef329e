// vLLM v1 start-up (docs/serving-memory-model.md §1.1, §1.2, §1.5): gpu_worker.py init_device /
// determine_available_memory / initialize_from_config / compile_or_warm_up_model.
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/core/checked.hpp"
#include "sim/engine/engine_limits.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/startup.hpp"
#include "sim/engine/vllm_kv_cache_groups.hpp"
#include "sim/model/dtype.hpp"
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

Bytes vllm_mla_chunked_prefill_workspace_bytes(const model::ModelConfig& model, std::int64_t max_model_len,
                                               std::int64_t max_num_seqs, int block_size) {
  if (!model.is_mla()) return 0;
  // vllm/v1/attention/backends/mla/common.py determine_chunked_prefill_workspace_size (commit 00a817ada).
  const std::int64_t per_seq = max_num_seqs * block_size;
  const std::int64_t rows = std::max(std::min(std::max(8 * max_model_len, 4 * per_seq), std::int64_t{64} * 1024), per_seq);
  const auto head_size = static_cast<Bytes>(model.kv_lora_rank + model.qk_rope_head_dim);  // get_head_size()
  return saturating_mul(saturating_mul(static_cast<Bytes>(rows), head_size), model::dtype_bytes(model.dtype));
}

std::vector<Bytes> vllm_aiter_mla_buffers(std::int64_t max_num_seqs, std::int64_t max_model_len) {
  // vllm/v1/attention/backends/mla/rocm_aiter_mla.py AiterMLAMetadataBuilder (commit 0038cd3c8): int32
  // paged_kv_indptr [N + 1], paged_kv_indices [N × max_model_len] (kernel pages of 1 token),
  // paged_kv_last_page_len [N], qo_indptr [N + 1], num_kv_splits_indptr [N + 1].
  const auto n = static_cast<Bytes>(max_num_seqs);
  return {(n + 1) * 4, saturating_mul(saturating_mul(n, static_cast<Bytes>(max_model_len)), Bytes{4}), n * 4, (n + 1) * 4,
          (n + 1) * 4};
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

// One capture pass of cudagraph_mode (§1.5): its sizes, and whether its graphs are FULL (attention
// captured too) or PIECEWISE (attention runs eagerly between the pieces, outside the pool).
struct GraphPass {
  std::vector<int> sizes;
  bool full = false;
};

// The capture passes of cudagraph_mode (§1.5): piecewise graphs for every size, full graphs for
// uniform-decode batches of at most max_num_seqs.
std::vector<GraphPass> graph_passes(const VllmConfig& c) {
  const std::vector<int>& sizes = *c.cudagraph_capture_sizes;
  std::vector<int> full_sizes;
  for (int s : sizes)
    if (s <= *c.max_num_seqs) full_sizes.push_back(s);
  switch (c.cudagraph_mode.value_or(CudaGraphMode::none)) {
    case CudaGraphMode::none: return {};
    case CudaGraphMode::piecewise: return {{sizes, false}};
    case CudaGraphMode::full: return {{sizes, true}};
    case CudaGraphMode::full_decode_only: return {{full_sizes, true}};
    case CudaGraphMode::full_and_piecewise: return {{sizes, false}, {full_sizes, true}};
  }
  return {};
}

// vLLM's start-up as the engine core and its worker run it (§1.1, §1.2): one method per step, in
// order; a step that fails records the failure in the result and the cascade stops there.
class VllmStartup {
 public:
  VllmStartup(const Deployment& d, VllmConfig c, const StartupDirectives& directives) : d_(d), directives_(directives) {
    r_.engine = model::Engine::vllm;
    r_.filled = resolve(c, d);
    r_.config = c;
    c_ = std::move(c);
    T_ = *c_.max_num_batched_tokens;
    N_ = std::min(*c_.max_num_seqs, T_);
    block_ = *c_.block_size;
    r_.kv_block_tokens = block_;
    r_.max_running_requests = *c_.max_num_seqs;
    r_.sampler.kind = c_.sampler;
    r_.forward.attention = *c_.attention_backend == VllmAttentionBackend::flashinfer ? model::AttentionBackend::flashinfer
                                                                                      : model::AttentionBackend::flash_attn;
    // vLLM #37442 cached a zeroed MLA decode output per layer, sized by max_num_seqs (§4c).
    r_.forward.mla_decode_out = c_.mla_decode_out;
    r_.forward.mla_decode_out_rows = *c_.max_num_seqs;
    // torch.compile's liveness unless enforce_eager runs the model code as plain Python, whose
    // decoder loop holds each layer's input until the layer returns (forward_program.hpp).
    r_.forward.caller_holds_layer_input = c_.enforce_eager;
    r_.forward.moe_backend = c_.moe_backend;
    r_.memory = make_serving_memory(d);
    rules_ = &vllm_version_rules(c_.version);
  }

  StartupResult run() {
    if (init_device() && load_model() && determine_available_memory() && get_kv_cache_config() &&
        initialize_attn_backend() && initialize_kv_cache_tensors() && compile_or_warm_up_model() && allocate_canary(r_, d_, directives_.canary)) {
      r_.ok = true;
      r_.stage = StartupStage::serving;
    }
    r_.figures = f_;
    finish_bytes(r_);
    return std::move(r_);
  }

 private:
  alloc::CachingAllocator& allocator() { return *r_.memory.allocator; }
  device::Device& gpu() { return *r_.memory.device; }
  std::int64_t non_torch_now() {
    return static_cast<std::int64_t>(gpu().total() - gpu().free_bytes() - allocator().reserved_bytes());
  }

  // init_device: the baseline snapshot and the utilisation check (§1.1).
  bool init_device() {
    // Current V1 initialises the distributed environment before its snapshot, "so that NCCL buffers
    // are allocated before we measure available memory" (gpu_worker.py init_device); 0.6–0.10 after
    // it, so their non-torch figure counts them (§1.7, §9).
    if (rules_->snapshot_after_distributed && !init_distributed(r_, d_)) return false;
    const Bytes total = gpu().total();
    f_.free_at_start = gpu().free_bytes();
    f_.requested = static_cast<Bytes>(std::floor(static_cast<double>(total) * c_.gpu_memory_utilization));
    // V0's and 0.8's init_device only record the free memory (vllm/worker/worker.py @ 6ae52299e,
    // vllm/v1/worker/gpu_worker.py @ v0.8.x).
    if (f_.free_at_start < f_.requested && rules_->free_memory_check) {
      fail(r_, StartupStage::memory_check,
           fmt::format("Free memory on device cuda:0 ({}/{} GiB) on startup is less than desired GPU memory "
                       "utilization ({}, {} GiB). Decrease GPU memory utilization or reduce GPU memory used by "
                       "other processes.",
                       gib(static_cast<double>(f_.free_at_start)), gib(static_cast<double>(total)),
                       c_.gpu_memory_utilization, gib(static_cast<double>(f_.requested))));
      return false;
    }
    non_torch_baseline_ = non_torch_now();
    return rules_->snapshot_after_distributed || init_distributed(r_, d_);
  }

  // load_model: model_memory_usage is the torch-allocated growth, the rotary cache the model's
  // attention builds among the weights included (vLLM get_rope keeps it in the model dtype).
  bool load_model() {
    if (!load_weights(r_, d_, model::RotaryRules{})) return false;
    f_.model_memory_usage = r_.bytes.weights + r_.bytes.rotary_cache;
    return true;
  }

  // determine_available_memory: the KV cache's bytes, from the profile run (§1.1) or a start-up
  // policy's decision in its place.
  bool determine_available_memory() {
    const model::KvLayout layout =
        model::kv_layout(d_.model, engine_traits(model::Engine::vllm).kv_pool, c_.kv_cache_dtype, d_.placement());
    f_.page_size = model::vllm_page_size_bytes(layout, block_);
    // The KV cache groups (§1.2b): group_size tensors, each shared by one layer of every group.
    const model::TensorParallelShard stage = model::rank_shard(d_.model, d_.placement());
    groups_ = vllm_kv_cache_groups(d_.model, !c_.disable_hybrid_kv_cache_manager, stage.first_layer, stage.end_layer);
    layers_ = groups_.group_size;
    num_groups_ = static_cast<std::int64_t>(groups_.groups.size());
    r_.kv_group_windows = vllm_group_windows(groups_);
    r_.kv_groups_chunked = vllm_groups_chunked(groups_);
    // The first GEMM (the profile run, or a policy's own first forward) creates the cuBLAS workspaces.
    initialise_cublas(r_.memory, d_);
    return directives_.kv_sizer ? policy_decides_kv() : profile_run();
  }

  // A start-up policy decides the capacity in place of determine_available_memory.
  bool policy_decides_kv() {
    KvSizingInputs in{d_, r_};
    in.free_before_weights = f_.free_at_start;
    in.free_after_weights = gpu().free_bytes();
    in.non_torch_at_start = static_cast<Bytes>(non_torch_baseline_);
    // A token of every group: the pool's bytes per token as vLLM reports its size (§1.2b).
    in.kv_bytes_per_token =
        f_.page_size * static_cast<Bytes>(layers_) * static_cast<Bytes>(num_groups_) / static_cast<Bytes>(block_);
    in.kv_block_tokens = block_;
    in.prefill_tokens = T_;
    in.batch_seqs = N_;
    in.max_graph_batch = c_.cudagraph_mode == CudaGraphMode::none || c_.cudagraph_capture_sizes->empty()
                             ? 0
                             : c_.cudagraph_capture_sizes->back();
    for (const GraphPass& pass : graph_passes(c_))
      in.graph_sizes.insert(in.graph_sizes.end(), pass.sizes.begin(), pass.sizes.end());
    Bytes workspace =
        (*c_.attention_backend == VllmAttentionBackend::flashinfer ? model::kVllmFlashInferWorkspace : 0) +
        mla_chunked_prefill_workspace();
    for (Bytes b : aiter_mla_buffers()) workspace += b;
    in.workspace_bytes = [workspace](std::int64_t) { return workspace; };
    policy_tokens_ = decide_kv_tokens(directives_, in, 0);
    if (!policy_tokens_) return false;
    f_.available_kv = static_cast<std::int64_t>(
        saturating_mul(vllm_request_kv_bytes(*policy_tokens_, block_, f_.page_size, layers_), static_cast<Bytes>(num_groups_)));
    return true;
  }

  // profile_run inside memory_profiling (§1.1). Attention metadata is absent, so no attention
  // workspace is created or measured.
  bool profile_run() {
    alloc::CachingAllocator& a = allocator();
    a.empty_cache();
    a.reset_peak_stats();
    const Bytes allocated_before = a.allocated_bytes();
    model::ForwardOptions profile_forward = r_.forward;
    profile_forward.attention_workspace = 0;
    model::AllocationProgram profile =
        model::step_program(d_.model, model::ForwardShape{T_, N_, 0, d_.tp}, profile_forward, r_.sampler);
    model::ProgramRun ran;
    if (!run_eager(r_, profile, ran)) {
      if (is_sampler_tensor(profile.ops[ran.oom_op].tensor)) {
        r_.oom = *ran.oom;
        fail(r_, StartupStage::profile_run, sampler_oom_message(N_));
      } else {
        fail_oom(r_, StartupStage::profile_run, *ran.oom, d_);
      }
      return false;
    }
    const Bytes peak = static_cast<Bytes>(a.stats().allocated_bytes[alloc::kAll].peak);
    a.empty_cache();
    f_.torch_peak_increase = peak - allocated_before;
    if (rules_->accounting == VllmNonKvAccounting::peak_plus_all_non_torch) {
      // V0 determine_num_available_blocks (vllm/worker/worker.py, commit 6ae52299e) and V1's
      // determine_available_memory @ v0.8.x: non-torch is everything used on the device but not
      // allocated by torch after empty_cache — the CUDA context, other processes and cached-but-split
      // blocks included — not only its growth.
      const auto used = static_cast<std::int64_t>(gpu().total() - gpu().free_bytes());
      f_.non_torch_increase = static_cast<Bytes>(std::max<std::int64_t>(0, used - static_cast<std::int64_t>(a.allocated_bytes())));
    } else {
      f_.non_torch_increase = static_cast<Bytes>(std::max<std::int64_t>(0, non_torch_now() - non_torch_baseline_));
    }
    const std::int64_t non_kv =
        static_cast<std::int64_t>(f_.model_memory_usage + f_.torch_peak_increase + f_.non_torch_increase);
    f_.available_kv = c_.kv_cache_memory_bytes ? static_cast<std::int64_t>(*c_.kv_cache_memory_bytes)
                                               : static_cast<std::int64_t>(f_.requested) - non_kv;
    r_.log.push_back(fmt::format("Available KV cache memory: {} GiB", gib(static_cast<double>(f_.available_kv))));
    return true;
  }

  // get_kv_cache_config (§1.2): pages per layer, then the one-request check.
  bool get_kv_cache_config() {
    if (f_.available_kv <= 0) {
      fail(r_, StartupStage::kv_cache_sizing,
           "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
           "the engine.");
      return false;
    }
    const std::int64_t max_model_len = *c_.max_model_len;
    if (!rules_->v1_kv_cache_check) return v0_raise_if_cache_size_invalid();
    // _max_memory_usage_bytes_from_groups: group_size × page × the blocks one request may hold.
    const Bytes needed = request_bytes(max_model_len);
    if (needed > static_cast<Bytes>(f_.available_kv) && !directives_.skip_capacity_checks) {
      fail(r_, StartupStage::kv_cache_sizing,
           fmt::format("To serve at least one request with the model's max seq len ({}), {} GiB KV cache is needed, "
                       "which is larger than the available KV cache memory ({} GiB). Based on the available memory, "
                       "the estimated maximum model length is {}. Try increasing `gpu_memory_utilization` or "
                       "decreasing `max_model_len` when initializing the engine.",
                       max_model_len, gib(static_cast<double>(needed)), gib(static_cast<double>(f_.available_kv)),
                       estimated_max_model_len()));
      return false;
    }
    r_.kv_blocks = policy_tokens_ ? *policy_tokens_ / block_ * num_groups_
                   : c_.num_gpu_blocks_override ? *c_.num_gpu_blocks_override
                                                : vllm_num_blocks(f_.available_kv, f_.page_size, layers_);
    // The scheduler holds a few words per block (engine_limits.hpp); beyond the limit only a larger
    // block_size (or less memory) makes the cache simulable.
    if (r_.kv_blocks > limits::kMaxKvBlocks)
      throw EngineConfigError(
          c_.num_gpu_blocks_override ? "num_gpu_blocks_override"
          : c_.kv_cache_memory_bytes ? "kv_cache_memory_bytes"
                                     : "block_size",
          fmt::format("vllm: the KV cache would hold {} blocks of {} tokens, above the limit of {} (docs/limits.md); "
                      "raise block_size or give the cache less memory",
                      r_.kv_blocks, block_, limits::kMaxKvBlocks));
    // _report_kv_cache_config: num_blocks // groups × block_size tokens;
    // get_max_concurrency_for_kv_cache_config: num_blocks over the blocks one request may hold.
    r_.kv_tokens = r_.kv_blocks / num_groups_ * block_;
    f_.max_concurrency = static_cast<double>(r_.kv_blocks) /
                         static_cast<double>(vllm_request_blocks(groups_, max_model_len, T_, block_));
    r_.log.push_back(fmt::format("GPU KV cache size: {} tokens", r_.kv_tokens));
    r_.log.push_back(
        fmt::format("Maximum concurrency for {} tokens per request: {:.2f}x", max_model_len, f_.max_concurrency));
    return true;
  }

  Bytes request_bytes(std::int64_t max_model_len) const {
    return saturating_mul(
        saturating_mul(static_cast<Bytes>(vllm_request_blocks(groups_, max_model_len, T_, block_)), f_.page_size),
        static_cast<Bytes>(layers_));
  }

  // _estimate_max_model_len_from_groups: the longest max_model_len whose request fits, by binary
  // search over [1, max_model_len]; 0 when one token does not fit.
  std::int64_t estimated_max_model_len() const {
    if (num_groups_ == 1) return vllm_estimate_max_model_len(f_.available_kv, block_, f_.page_size, layers_);
    const auto fits = [&](std::int64_t len) { return request_bytes(len) <= static_cast<Bytes>(f_.available_kv); };
    std::int64_t lo = 1, hi = *c_.max_model_len, best = 0;
    if (!fits(lo)) return 0;
    while (lo <= hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (fits(mid)) {
        best = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return best;
  }

  // V0's raise_if_cache_size_invalid (vllm/worker/worker.py, commit 6ae52299e) on num_gpu_blocks =
  // available // (block × bytes per token × layers).
  bool v0_raise_if_cache_size_invalid() {
    r_.kv_blocks = policy_tokens_ ? *policy_tokens_ / block_
                   : c_.num_gpu_blocks_override ? *c_.num_gpu_blocks_override
                                                : vllm_num_blocks(f_.available_kv, f_.page_size, layers_);
    if (r_.kv_blocks > limits::kMaxKvBlocks)
      throw EngineConfigError("block_size", fmt::format("vllm: the KV cache would hold {} blocks of {} tokens, above the "
                                                        "limit of {} (docs/limits.md); raise block_size or give the "
                                                        "cache less memory",
                                                        r_.kv_blocks, block_, limits::kMaxKvBlocks));
    if (r_.kv_blocks <= 0) {
      fail(r_, StartupStage::kv_cache_sizing,
           "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
           "the engine.");
      return false;
    }
    const std::int64_t max_seq_len = block_ * r_.kv_blocks;
    if (*c_.max_model_len > max_seq_len && !directives_.skip_capacity_checks) {
      fail(r_, StartupStage::kv_cache_sizing,
           fmt::format("The model's max seq len ({}) is larger than the maximum number of tokens that can be stored "
                       "in KV cache ({}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
                       "initializing the engine.",
                       *c_.max_model_len, max_seq_len));
      return false;
    }
    r_.kv_tokens = max_seq_len;
    f_.max_concurrency = static_cast<double>(r_.kv_blocks) /
                         static_cast<double>((*c_.max_model_len + block_ - 1) / block_);
    r_.log.push_back(fmt::format("# GPU blocks: {}", r_.kv_blocks));
    return true;
  }

  // initialize_attn_backend: the metadata builders, created after the profile run and before the KV
  // tensors; MLA's allocates its chunked-prefill workspace (§1.6), which no profile run measured.
  // aiter's MLA builder adds its decode buffers when full graphs are captured (§1.6).
  bool initialize_attn_backend() {
    if (!allocate_engine_buffer(r_, d_, mla_chunked_prefill_workspace(), StartupStage::attention_workspace))
      return false;
    for (Bytes b : aiter_mla_buffers())
      if (!allocate_engine_buffer(r_, d_, b, StartupStage::attention_workspace)) return false;
    return true;
  }
  std::vector<Bytes> aiter_mla_buffers() const {
    const bool full_graphs = c_.cudagraph_mode == CudaGraphMode::full || c_.cudagraph_mode == CudaGraphMode::full_decode_only ||
                             c_.cudagraph_mode == CudaGraphMode::full_and_piecewise;
    if (*c_.attention_backend != VllmAttentionBackend::rocm_aiter_mla || !full_graphs) return {};
    return vllm_aiter_mla_buffers(*c_.max_num_seqs, *c_.max_model_len);
  }
  Bytes mla_chunked_prefill_workspace() const {
    return vllm_mla_chunked_prefill_workspace_bytes(d_.model, *c_.max_model_len, *c_.max_num_seqs, block_);
  }

  // initialize_kv_cache_tensors: one zeroed int8 tensor of page_size × num_blocks per layer.
  bool initialize_kv_cache_tensors() {
    return allocate_kv_cache(r_, d_, layers_, f_.page_size * static_cast<Bytes>(r_.kv_blocks));
  }

  // compile_or_warm_up_model: the first warm-up with attention metadata builds the backend's
  // workspace (FlashInfer 256 MiB, §5), graphs are captured into one private pool (§1.5), then the
  // dummy sampler runs.
  bool compile_or_warm_up_model() {
    if (*c_.attention_backend == VllmAttentionBackend::flashinfer) {
      r_.forward.attention_workspace = model::kVllmFlashInferWorkspace;
      if (!allocate_attention_workspace(r_, d_, r_.forward.attention_workspace)) return false;
    }
    // V0's _warm_up_model captures the graphs only; its profile run already sampled.
    return capture_model() && (!rules_->sampler_warmup_after_capture || dummy_sampler_run());
  }

  // capture_model: each pass of cudagraph_mode (§1.5), and the memory the capture took.
  bool capture_model() {
    const Bytes free_before_capture = gpu().free_bytes();
    const std::vector<GraphPass> passes = graph_passes(c_);
    for (const GraphPass& pass : passes) {
      // The graph's output is dropped (weak_ref_tensors, compilation/cuda_graph.py); a FULL graph
      // also holds attention, with FA3's split accumulators (§1.5).
      DecodeGraph graph;
      graph.forward = r_.forward;
      if (pass.full) graph.forward.attention_splits = flash_attn_splits_in_full_graphs();
      if (!capture_decode_graphs(r_, d_, pass.sizes, graph)) return false;
      r_.graph_batch_sizes.insert(r_.graph_batch_sizes.end(), pass.sizes.begin(), pass.sizes.end());
    }
    std::sort(r_.graph_batch_sizes.begin(), r_.graph_batch_sizes.end());
    r_.graph_batch_sizes.erase(std::unique(r_.graph_batch_sizes.begin(), r_.graph_batch_sizes.end()),
                               r_.graph_batch_sizes.end());
    const Bytes free_after_capture = gpu().free_bytes();
    f_.cudagraph_memory = free_before_capture > free_after_capture ? free_before_capture - free_after_capture : 0;
    if (!passes.empty())
      r_.log.push_back(fmt::format("Graph capturing finished, took {} GiB", gib(static_cast<double>(f_.cudagraph_memory))));
    // The suggestion logged after capture, with its 150 MiB redundancy (§1.1); it changes nothing.
    f_.suggested_kv_cache_memory =
        static_cast<std::int64_t>(f_.requested) -
        static_cast<std::int64_t>(f_.model_memory_usage + f_.torch_peak_increase + f_.non_torch_increase +
                                  f_.cudagraph_memory + 150 * MiB);
    return true;
  }

  // FlashAttentionMetadataBuilder (v1/attention/backends/flash_attn.py, v0.11.0): with full graphs
  // and FA3 (aot_schedule), batches up to the largest capture size pass max_num_splits =
  // VLLM_FLASH_ATTN_MAX_NUM_SPLITS_FOR_CUDA_GRAPH (32, vllm/envs.py since #25274; 16 before) so the
  // split accumulators are sized at capture. FA3 runs on Hopper only (fa_utils.py
  // get_flash_attn_version: compute capability 9.x); a profile without compute_capability is taken
  // as FA2 (no accumulators), docs/models-and-gpus.md.
  int flash_attn_splits_in_full_graphs() const {
    const bool hopper = d_.gpu.compute_capability_major() == 9;
    if (*c_.attention_backend != VllmAttentionBackend::flash_attn || !hopper) return 0;
    return rules_->full_graph_flash_attn_splits;
  }

  // _dummy_sampler_run after capture, over N requests; its blocks stay cached (§1.1).
  bool dummy_sampler_run() {
    // compile_or_warm_up_model: only the last pipeline rank samples.
    if (!model::runs_sampler(r_.forward)) return true;
    model::AllocationProgram sampler = model::sampler_program(d_.model, N_, d_.tp, r_.sampler);
    model::ProgramRun ran;
    if (run_eager(r_, sampler, ran)) return true;
    r_.oom = *ran.oom;
    fail(r_, StartupStage::sampler_warmup, sampler_oom_message(N_));
    return false;
  }

  const Deployment& d_;
  VllmConfig c_;
  const StartupDirectives& directives_;
  const VllmVersionRules* rules_ = nullptr;
  StartupResult r_;
  VllmFigures f_;
  std::int64_t T_ = 0;  // max_num_batched_tokens
  std::int64_t N_ = 0;  // the profile run's sequences: min(max_num_seqs, T)
  int block_ = 0;
  int layers_ = 0;      // the KV cache's tensors: every layer, or group_size for a hybrid model (§1.2b)
  VllmKvCacheGroups groups_;
  std::int64_t num_groups_ = 1;
  std::int64_t non_torch_baseline_ = 0;
  std::optional<std::int64_t> policy_tokens_;
};

}  // namespace

StartupResult vllm_startup(const Deployment& d, VllmConfig c, const StartupDirectives& directives) {
  return VllmStartup(d, std::move(c), directives).run();
}

}  // namespace headroom::engine
