// SGLang start-up (docs/serving-memory-model.md §2.1–2.3, §2.5): ModelRunner.initialize — load_model,
// init_memory_pool (profile_max_num_token, token-to-KV pool, ReqToTokenPool), init_cublas,
// init_attention_backend, init_device_graphs. There is no profile forward: the KV size is
// arithmetic on free memory.
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/core/checked.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/startup.hpp"
#include "sim/model/attention_layers.hpp"

namespace headroom::engine {

std::int64_t sglang_profile_max_num_token(Bytes total_gpu_memory, Bytes available_gpu_memory,
                                          double mem_fraction_static, Bytes cell_size, int page_size) {
  double rest = static_cast<double>(available_gpu_memory) -
                static_cast<double>(total_gpu_memory) * (1.0 - mem_fraction_static);
  if (rest <= 0 || cell_size == 0) return 0;
  auto tokens = static_cast<std::int64_t>(std::floor(rest / static_cast<double>(cell_size)));
  return tokens / page_size * page_size;
}

// §2.3: clamp(int(max_total_num_tokens / context_len × 512), 2048, 4096).
std::int64_t ClampedWorkspace::requests(std::int64_t kv_tokens) const {
  auto estimate = static_cast<std::int64_t>(static_cast<double>(kv_tokens) / static_cast<double>(context_len) * 512.0);
  return std::clamp(estimate, min_requests, max_requests);
}

std::int64_t sglang_max_num_reqs(std::int64_t max_total_num_tokens, std::int64_t context_len) {
  return ClampedWorkspace{0, context_len}.requests(max_total_num_tokens);
}

Bytes sglang_req_to_token_pool_bytes(std::int64_t max_num_reqs, std::int64_t context_len) {
  return static_cast<Bytes>(max_num_reqs) * static_cast<Bytes>(context_len + 4) * 4;  // int32
}

std::int64_t sglang_max_running_requests(std::int64_t max_total_num_tokens, std::int64_t max_num_reqs,
                                         std::optional<std::int64_t> user_value) {
  std::int64_t limit = user_value ? *user_value : max_total_num_tokens / 2;
  return std::min(limit, max_num_reqs);
}

Bytes aiter_workspace_bytes(std::int64_t max_bs, int q_heads, int head_dim, std::int64_t context_len) {
  // aiter_backend.py: _AITER_PARTITION_SIZE_ROCM = 256; fp32 partial outputs [bs, Hq, P, D] plus
  // fp32 exp_sums and max_logits [bs, Hq, P] (§2.5).
  auto partitions = static_cast<Bytes>((context_len + 255) / 256);
  // Saturates at the extremes of the limits: such a workspace only ever fails to allocate.
  return saturating_mul(saturating_mul(saturating_mul(static_cast<Bytes>(max_bs), static_cast<Bytes>(q_heads)), partitions),
                        4 * static_cast<Bytes>(head_dim) + 8);
}

namespace {

// SGLang's start-up as ModelRunner.initialize runs it (model_runner.py): one method per step, in
// order; a step that fails records the failure in the result and the cascade stops there.
class SglangStartup {
 public:
  SglangStartup(const Deployment& d, SglangConfig c, const StartupDirectives& directives)
      : d_(d), directives_(directives) {
    r_.engine = model::Engine::sglang;
    r_.filled = resolve(c, d);
    r_.config = c;
    c_ = std::move(c);
    r_.kv_block_tokens = c_.page_size;
    r_.sampler.kind = c_.sampling_backend;
    // SGLang runs its model code eagerly (no torch.compile by default): the decoder loop holds each
    // layer's input until the layer returns (forward_program.hpp, vllm#10517's 108 KiB/token).
    r_.forward.caller_holds_layer_input = true;
    context_len_ = *c_.context_length;
    hybrid_swa_ = sglang_hybrid_swa(d_.model, c_);
    rules_ = &sglang_version_rules(c_.version);
    r_.memory = make_serving_memory(d);
  }

  StartupResult run() {
    // ModelRunner.init_torch_distributed runs before the weights; the free memory it returns (the
    // minimum over ranks) is already net of the communicators' buffers (§2.2, §9).
    if (init_distributed(r_, d_) && load_model() && init_memory_pool() && init_cublas() && init_attention_backend() && init_device_graphs() &&
        allocate_canary(r_, d_, directives_.canary)) {
      r_.ok = true;
      r_.stage = StartupStage::serving;
    }
    r_.figures = f_;
    finish_bytes(r_);
    return std::move(r_);
  }

 private:
  // load_model. §2.2: total_gpu_memory is the free memory before weights, available the free memory
  // after, the float32 rotary caches built among the weights included (rotary_embedding.py keeps
  // cos_sin_cache in float32 on CUDA, PR #3134).
  bool load_model() {
    f_.total_gpu_memory = measured_free(r_.memory);
    if (!load_weights(r_, d_, model::RotaryRules{.float32 = true})) return false;
    f_.available_gpu_memory = measured_free(r_.memory);
    return true;
  }

  // init_memory_pool: profile_max_num_token, the token-to-KV pool, the ReqToTokenPool.
  bool init_memory_pool() {
    f_.mem_fraction_static =
        sglang_aiter_mem_fraction_static(*c_.mem_fraction_static, *c_.attention_backend, context_len_);
    if (f_.mem_fraction_static != *c_.mem_fraction_static)
      r_.log.push_back(fmt::format("aiter with context_length {} > 8192: mem_fraction_static {} -> {} (§2.5)",
                                   context_len_, *c_.mem_fraction_static, f_.mem_fraction_static));
    layout_ = model::kv_layout(d_.model, engine_traits(model::Engine::sglang).kv_pool, c_.kv_cache_dtype, d_.placement());
    f_.cell_size = layout_.bytes_per_token;
    f_.rest_memory = static_cast<double>(f_.available_gpu_memory) -
                     static_cast<double>(f_.total_gpu_memory) * (1.0 - f_.mem_fraction_static);
    std::int64_t tokens = sglang_profile_max_num_token(f_.total_gpu_memory, f_.available_gpu_memory,
                                                       f_.mem_fraction_static, f_.cell_size, c_.page_size);
    if (directives_.kv_sizer) {
      std::optional<std::int64_t> decided = policy_decides_kv(tokens);
      if (!decided) return false;
      tokens = *decided;
    }
    if (c_.max_total_tokens) tokens = std::min(tokens, *c_.max_total_tokens / c_.page_size * c_.page_size);
    if (tokens <= 0) {
      fail(r_, StartupStage::kv_cache_sizing,
           fmt::format("Not enough memory. Please try to increase --mem-fraction-static. Current value: "
                       "mem_fraction_static={}",
                       f_.mem_fraction_static));
      return false;
    }
    f_.max_num_reqs = c_.max_running_requests ? *c_.max_running_requests : sglang_max_num_reqs(tokens, context_len_);
    if (hybrid_swa_) {
      // set_num_tokens_hybrid_swa after the request pool's size (§2.2): max_total_num_tokens
      // becomes the full pool's size. The SWA layers are gpt-oss's sliding ones or Llama 4's
      // chunked ones, whose window is attention_chunk_size (model_runner.py load_model).
      for (const model::AttentionLayers& kind : model::attention_layer_kinds(d_.model)) {
        if (kind.kind == model::AttentionKind::full) f_.full_layers = static_cast<int>(kind.layers.size());
        else {
          f_.swa_layers = static_cast<int>(kind.layers.size());
          f_.swa_layers_chunked = kind.kind == model::AttentionKind::chunked_local;
          // The scheduler's sliding_window_size: gpt-oss's get_attention_sliding_window_size is
          // config.sliding_window − 1 (models/gpt_oss.py, PR #8824; model_runner.py prefers it).
          f_.sliding_window = f_.swa_layers_chunked ? kind.window : kind.window - 1;
        }
      }
      const SglangSwaTokens split =
          sglang_hybrid_swa_tokens(tokens, f_.full_layers, f_.swa_layers, c_.swa_full_tokens_ratio, c_.page_size);
      if (f_.swa_layers_chunked)
        r_.log.push_back(fmt::format("Setting sliding_window_size to be attention_chunk_size: {}", f_.sliding_window));
      r_.log.push_back(fmt::format("Use sliding window memory pool. full_layer_tokens={}, swa_layer_tokens={}",
                                   split.full, split.swa));
      if (split.full <= 0 || split.swa <= 0) {
        fail(r_, StartupStage::kv_cache_sizing,
             fmt::format("Not enough memory for the SWA pool: full_layer_tokens={}, swa_layer_tokens={} "
                         "(mem_fraction_static={}, swa_full_tokens_ratio={})",
                         split.full, split.swa, f_.mem_fraction_static, c_.swa_full_tokens_ratio));
        return false;
      }
      f_.unsplit_tokens = tokens;
      tokens = split.full;
      f_.swa_tokens = split.swa;
    }
    r_.kv_tokens = tokens;
    r_.kv_blocks = tokens / c_.page_size;
    // 0.4's ReqToTokenPool has max_num_reqs + 1 rows, and its size bounds the running requests and
    // the graph sizes (§2.6).
    pool_size_ = f_.max_num_reqs + rules_->req_to_token_pool_extra_rows;
    f_.max_running_requests = sglang_max_running_requests(tokens, pool_size_, c_.max_running_requests);
    r_.max_running_requests = f_.max_running_requests;

    // Token-to-KV pool (§2.2): 2·L tensors [size + page, Hkv, D] (K and V per layer), or L MLA
    // tensors [size + page, 1, kv_lora_rank + rope]; the first page is the dummy sink.
    const auto rows = static_cast<Bytes>(tokens + c_.page_size);
    const Bytes per_token = layout_.mla ? layout_.bytes_per_token_per_layer : layout_.bytes_per_token_per_layer / 2;
    if (hybrid_swa_) {
      // SWAKVPool: an MHATokenToKVPool of each size over its layers; SWATokenToKVPoolAllocator's
      // int64 full-to-SWA index map of size + page + 1 (swa_memory_pool.py, §2.2).
      const auto swa_rows = static_cast<Bytes>(f_.swa_tokens + c_.page_size);
      if (!allocate_kv_cache(r_, d_, 2 * f_.full_layers, rows * per_token) ||
          !allocate_kv_cache(r_, d_, 2 * f_.swa_layers, swa_rows * per_token) ||
          !allocate_kv_cache(r_, d_, 1, (rows + 1) * 8))
        return false;
    } else {
      const int tensors = layout_.mla ? layout_.layers : 2 * layout_.layers;
      if (!allocate_kv_cache(r_, d_, tensors, rows * per_token)) return false;
    }
    r_.log.push_back(fmt::format("KV Cache is allocated. #tokens: {}, K size: {:.2f} GB, V size: {:.2f} GB", tokens,
                                 static_cast<double>(r_.bytes.kv_cache) / 2 / static_cast<double>(GiB),
                                 static_cast<double>(r_.bytes.kv_cache) / 2 / static_cast<double>(GiB)));

    // ReqToTokenPool (§2.3): inside the 1 − MFS margin.
    return allocate_request_pool(r_, d_, sglang_req_to_token_pool_bytes(pool_size_, context_len_));
  }

  // aiter partitions by the context (§2.5), or by the KV capacity when a policy caps them (#20888).
  std::int64_t workspace_context(std::int64_t kv_tokens) const {
    return directives_.cap_workspace_by_kv ? std::min(context_len_, std::max<std::int64_t>(kv_tokens, 1)) : context_len_;
  }

  Bytes workspace_for(std::int64_t kv_tokens) const {
    if (*c_.attention_backend == SglangAttentionBackend::flashinfer) return model::kSglangFlashInferWorkspace;
    if (*c_.attention_backend == SglangAttentionBackend::torch_native || *c_.attention_backend == SglangAttentionBackend::fa3)
      return 0;
    std::int64_t reqs = c_.max_running_requests ? *c_.max_running_requests : sglang_max_num_reqs(kv_tokens, context_len_);
    return aiter_workspace_bytes(reqs, d_.model.heads / d_.placement().attn_tp, d_.model.head_dim, workspace_context(kv_tokens));
  }

  // A start-up policy's capacity in place of profile_max_num_token's (`tokens`).
  std::optional<std::int64_t> policy_decides_kv(std::int64_t tokens) {
    KvSizingInputs in{d_, r_};
    in.free_before_weights = f_.total_gpu_memory;
    in.free_after_weights = f_.available_gpu_memory;
    in.non_torch_at_start = r_.memory.device->total() - f_.total_gpu_memory;
    in.kv_bytes_per_token = f_.cell_size;
    in.kv_block_tokens = c_.page_size;
    in.prefill_tokens = *c_.chunked_prefill_size > 0 ? *c_.chunked_prefill_size : c_.max_prefill_tokens;
    // Without a request pool yet, the most sequences a step samples is bounded by the user's
    // max_running_requests or the pool's smallest size (§2.3).
    in.batch_seqs = std::min<std::int64_t>(in.prefill_tokens, c_.max_running_requests ? *c_.max_running_requests : 2048);
    in.max_graph_batch = c_.disable_cuda_graph ? 0 : *c_.cuda_graph_max_bs;
    if (!c_.disable_cuda_graph)  // the request pool is not sized yet: its smallest size (§2.3)
      in.graph_sizes = c_.cuda_graph_bs ? *c_.cuda_graph_bs : graph_batch_sizes(2048);
    in.workspace_bytes = [this](std::int64_t kv_tokens) { return workspace_for(kv_tokens); };
    if (*c_.attention_backend == SglangAttentionBackend::aiter && !c_.max_running_requests &&
        !directives_.cap_workspace_by_kv)
      in.clamped_workspace = ClampedWorkspace{
          aiter_workspace_bytes(1, d_.model.heads / d_.placement().attn_tp, d_.model.head_dim, context_len_), context_len_};
    return decide_kv_tokens(directives_, in, tokens);
  }

  // init_cublas: the first GEMM creates the cuBLAS workspaces outside the allocator (§5).
  bool init_cublas() {
    initialise_cublas(r_.memory, d_);
    return true;
  }

  // init_attention_backend: FlashInfer's global workspace (§5) or aiter's per-request partitions
  // (§2.5), sized by the request pool's rows and the query heads on this rank.
  bool init_attention_backend() {
    if (*c_.attention_backend == SglangAttentionBackend::torch_native) {
      // TorchNativeAttnBackend keeps no buffer; each step's temporaries depend on every request's
      // length: the eager program (§4d) replaces the compiled one while serving.
      model::EagerOptions eager;
      eager.path = model::EagerPath::sglang_torch_native;
      eager.tp = d_.tp;
      eager.context_len = context_len_;
      r_.eager = eager;
      return true;
    }
    if (*c_.attention_backend == SglangAttentionBackend::fa3) {
      // FlashAttentionBackend keeps no workspace of its own; FA3's kernels allocate their
      // softmax_lse per call (§4a). Its graph metadata comes with the graphs (init_device_graphs).
      r_.forward.attention = model::AttentionBackend::flash_attn;
      return true;
    }
    if (*c_.attention_backend == SglangAttentionBackend::flashinfer) {
      r_.forward.attention = model::AttentionBackend::flashinfer;
      r_.forward.attention_workspace = model::kSglangFlashInferWorkspace;
    } else {
      // aiter's CK kernels return the log-sum-exp like flash-attn; the workspace is its own.
      r_.forward.attention = model::AttentionBackend::flash_attn;
      r_.forward.attention_workspace = aiter_workspace_bytes(f_.max_num_reqs, d_.model.heads / d_.placement().attn_tp, d_.model.head_dim,
                                                             workspace_context(r_.kv_tokens));
    }
    return allocate_attention_workspace(r_, d_, r_.forward.attention_workspace);
  }

  // init_device_graphs: decode graphs up to cuda_graph_max_bs, one global pool (§2.3).
  bool init_device_graphs() {
    if (c_.disable_cuda_graph) return true;
    std::vector<int> sizes;
    if (c_.cuda_graph_bs) {
      for (int s : *c_.cuda_graph_bs)
        if (s <= pool_size_) sizes.push_back(s);
    } else {
      sizes = graph_batch_sizes(pool_size_);
    }
    if (sizes.empty()) return true;
    if (*c_.attention_backend == SglangAttentionBackend::fa3) {
      // CudaGraphRunner calls the backend's init_cuda_graph_state(max_bs) before capturing.
      const int max_bs = *std::max_element(sizes.begin(), sizes.end());
      // The local-attention metadata comes with attention_chunk_size, pool or not.
      for (Bytes bytes : sglang_fa3_graph_buffers(max_bs, context_len_, c_.page_size, hybrid_swa_, d_.model.attention_chunk))
        if (!allocate_engine_buffer(r_, d_, bytes, StartupStage::cuda_graph_capture)) return false;
    }
    DecodeGraph graph;
    graph.forward = r_.forward;
    // cuda_graph_runner.py @ v0.4.6 capture_one_batch_size: self.output_buffers[bs] keeps each
    // graph's own logits (§2.6).
    graph.logits = model::GraphLogitsOutput::kept;
    if (rules_->graph_logits_in_shared_buffer) {
      // CudaGraphRunner.__init__ (cuda_graph_runner.py, v0.5.x): next_token_logits_buffer, fp32
      // [max_bs, vocab_size], made before the captures; each graph's logits processor copies its
      // logits into it (logits_processor.py _get_logits), so no graph keeps logits of its own.
      const Bytes max_bs = static_cast<Bytes>(*std::max_element(sizes.begin(), sizes.end()));
      alloc::CachingAllocator& a = *r_.memory.allocator;
      alloc::Block* logits = a.malloc(max_bs * static_cast<Bytes>(d_.model.vocab) * 4);
      if (!logits) {
        fail_oom(r_, StartupStage::cuda_graph_capture, *a.last_oom(), d_);
        return false;
      }
      r_.memory.engine_buffers.push_back(logits);  // not a workspace: bytes.reserved holds it
      graph.logits = model::GraphLogitsOutput::engine_buffer;
    }
    if (!capture_decode_graphs(r_, d_, sizes, graph)) return false;
    r_.graph_computes_logits = true;
    r_.graph_batch_sizes = sizes;
    return true;
  }

  // The version's default graph sizes for a request pool of `pool_size` rows.
  std::vector<int> graph_batch_sizes(std::int64_t pool_size) const {
    return sglang_cuda_graph_batch_sizes(*c_.cuda_graph_max_bs, pool_size, rules_->graph_sizes, c_.gpu_memory_capacity_mib,
                                         d_.parallel.dp);
  }

  const Deployment& d_;
  SglangConfig c_;
  const StartupDirectives& directives_;
  const SglangVersionRules* rules_ = nullptr;
  std::int64_t pool_size_ = 0;  // the ReqToTokenPool's rows (§2.3, §2.6)
  StartupResult r_;
  SglangFigures f_;
  std::int64_t context_len_ = 0;
  bool hybrid_swa_ = false;  // SGLang's SWA KV pool (§2.2)
  model::KvLayout layout_;
};

}  // namespace

StartupResult sglang_startup(const Deployment& d, SglangConfig c, const StartupDirectives& directives) {
  return SglangStartup(d, std::move(c), directives).run();
}

}  // namespace headroom::engine
