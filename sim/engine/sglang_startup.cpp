// SGLang start-up (docs/serving-memory-model.md §2.1–2.3, §2.5): ModelRunner.initialize — load_model,
// init_memory_pool (profile_max_num_token, token-to-KV pool, ReqToTokenPool), init_cublas,
// init_attention_backend, init_device_graphs. There is no profile forward: the KV size is
// arithmetic on free memory.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/checked.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/startup.hpp"

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

StartupResult sglang_startup(const Deployment& d, SglangConfig c, const StartupDirectives& directives) {
  StartupResult r;
  r.engine = model::Engine::sglang;
  r.filled = resolve(c, d);
  r.config = c;
  SglangFigures f;
  r.kv_block_tokens = c.page_size;
  r.sampler.kind = c.sampling_backend;
  // SGLang runs its model code eagerly (no torch.compile by default): the decoder loop holds each
  // layer's input until the layer returns (forward_program.hpp, vllm#10517's 108 KiB/token).
  r.forward.caller_holds_layer_input = true;
  const std::int64_t context_len = *c.context_length;
  r.memory = make_serving_memory(d);
  ServingMemory& m = r.memory;
  auto finish = [&]() -> StartupResult {
    r.figures = f;
    finish_bytes(r);
    return std::move(r);
  };

  // §2.2: total_gpu_memory is the free memory before weights, available the free memory after.
  f.total_gpu_memory = measured_free(m);
  if (!load_weights(r, d)) return finish();
  f.available_gpu_memory = measured_free(m);

  f.mem_fraction_static = sglang_aiter_mem_fraction_static(*c.mem_fraction_static, *c.attention_backend, context_len);
  if (f.mem_fraction_static != *c.mem_fraction_static)
    r.log.push_back(fmt::format("aiter with context_length {} > 8192: mem_fraction_static {} -> {} (§2.5)",
                                context_len, *c.mem_fraction_static, f.mem_fraction_static));
  model::KvLayout layout = model::kv_layout(d.model, engine_traits(model::Engine::sglang).kv_pool, c.kv_cache_dtype, d.tp);
  f.cell_size = layout.bytes_per_token;
  f.rest_memory = static_cast<double>(f.available_gpu_memory) -
                  static_cast<double>(f.total_gpu_memory) * (1.0 - f.mem_fraction_static);
  std::int64_t tokens = sglang_profile_max_num_token(f.total_gpu_memory, f.available_gpu_memory,
                                                     f.mem_fraction_static, f.cell_size, c.page_size);
  // aiter partitions by the context (§2.5), or by the KV capacity when a policy caps them (#20888).
  auto workspace_context = [&](std::int64_t kv_tokens) {
    return directives.cap_workspace_by_kv ? std::min(context_len, std::max<std::int64_t>(kv_tokens, 1)) : context_len;
  };
  auto workspace_for = [&](std::int64_t kv_tokens) -> Bytes {
    if (*c.attention_backend == SglangAttentionBackend::flashinfer) return model::kSglangFlashInferWorkspace;
    std::int64_t reqs = c.max_running_requests ? *c.max_running_requests : sglang_max_num_reqs(kv_tokens, context_len);
    return aiter_workspace_bytes(reqs, d.model.heads / d.tp, d.model.head_dim, workspace_context(kv_tokens));
  };
  if (directives.kv_sizer) {
    KvSizingInputs in{d, r};
    in.free_before_weights = f.total_gpu_memory;
    in.free_after_weights = f.available_gpu_memory;
    in.non_torch_at_start = m.device->total() - f.total_gpu_memory;
    in.kv_bytes_per_token = f.cell_size;
    in.kv_block_tokens = c.page_size;
    in.prefill_tokens = *c.chunked_prefill_size > 0 ? *c.chunked_prefill_size : c.max_prefill_tokens;
    // Without a request pool yet, the most sequences a step samples is bounded by the user's
    // max_running_requests or the pool's smallest size (§2.3).
    in.batch_seqs = std::min<std::int64_t>(in.prefill_tokens, c.max_running_requests ? *c.max_running_requests : 2048);
    in.max_graph_batch = c.disable_cuda_graph ? 0 : *c.cuda_graph_max_bs;
    if (!c.disable_cuda_graph)  // the request pool is not sized yet: its smallest size (§2.3)
      in.graph_sizes = c.cuda_graph_bs ? *c.cuda_graph_bs : sglang_cuda_graph_batch_sizes(*c.cuda_graph_max_bs, 2048);
    in.workspace_bytes = workspace_for;
    if (*c.attention_backend == SglangAttentionBackend::aiter && !c.max_running_requests &&
        !directives.cap_workspace_by_kv)
      in.clamped_workspace = ClampedWorkspace{aiter_workspace_bytes(1, d.model.heads / d.tp, d.model.head_dim, context_len),
                                              context_len};
    std::optional<std::int64_t> decided = decide_kv_tokens(directives, in, tokens);
    if (!decided) return finish();
    tokens = *decided;
  }
  if (c.max_total_tokens) tokens = std::min(tokens, *c.max_total_tokens / c.page_size * c.page_size);
  if (tokens <= 0) {
    fail(r, StartupStage::kv_cache_sizing,
         fmt::format("Not enough memory. Please try to increase --mem-fraction-static. Current value: "
                     "mem_fraction_static={}",
                     f.mem_fraction_static));
    return finish();
  }
  r.kv_tokens = tokens;
  r.kv_blocks = tokens / c.page_size;
  f.max_num_reqs = c.max_running_requests ? *c.max_running_requests : sglang_max_num_reqs(tokens, context_len);
  f.max_running_requests = sglang_max_running_requests(tokens, f.max_num_reqs, c.max_running_requests);
  r.max_running_requests = f.max_running_requests;

  // Token-to-KV pool (§2.2): 2·L tensors [size + page, Hkv, D] (K and V per layer), or L MLA
  // tensors [size + page, 1, kv_lora_rank + rope]; the first page is the dummy sink.
  const auto rows = static_cast<Bytes>(tokens + c.page_size);
  const int tensors = layout.mla ? layout.layers : 2 * layout.layers;
  const Bytes per_token = layout.mla ? layout.bytes_per_token_per_layer : layout.bytes_per_token_per_layer / 2;
  const Bytes per_tensor = rows * per_token;
  if (!allocate_kv_cache(r, d, tensors, per_tensor)) return finish();
  r.log.push_back(fmt::format("KV Cache is allocated. #tokens: {}, K size: {:.2f} GB, V size: {:.2f} GB", tokens,
                              static_cast<double>(r.bytes.kv_cache) / 2 / static_cast<double>(GiB),
                              static_cast<double>(r.bytes.kv_cache) / 2 / static_cast<double>(GiB)));

  // ReqToTokenPool (§2.3): inside the 1 − MFS margin.
  if (!allocate_request_pool(r, d, sglang_req_to_token_pool_bytes(f.max_num_reqs, context_len))) return finish();

  // init_cublas: the first GEMM creates the cuBLAS workspaces outside the allocator (§5).
  initialise_cublas(m, d);

  // init_attention_backend: FlashInfer's global workspace (§5) or aiter's per-request partitions
  // (§2.5), sized by the request pool's rows and the query heads on this rank.
  if (*c.attention_backend == SglangAttentionBackend::flashinfer) {
    r.forward.attention = model::AttentionBackend::flashinfer;
    r.forward.attention_workspace = model::kSglangFlashInferWorkspace;
  } else {
    // aiter's CK kernels return the log-sum-exp like flash-attn; the workspace is its own.
    r.forward.attention = model::AttentionBackend::flash_attn;
    r.forward.attention_workspace =
        aiter_workspace_bytes(f.max_num_reqs, d.model.heads / d.tp, d.model.head_dim, workspace_context(tokens));
  }
  if (!allocate_attention_workspace(r, d, r.forward.attention_workspace)) return finish();

  // init_device_graphs: decode graphs up to cuda_graph_max_bs, one global pool (§2.3).
  if (!c.disable_cuda_graph) {
    std::vector<int> sizes;
    if (c.cuda_graph_bs) {
      for (int s : *c.cuda_graph_bs)
        if (s <= f.max_num_reqs) sizes.push_back(s);
    } else {
      sizes = sglang_cuda_graph_batch_sizes(*c.cuda_graph_max_bs, f.max_num_reqs);
    }
    if (!capture_decode_graphs(r, d, sizes)) return finish();
    r.graph_batch_sizes = sizes;
  }
  if (!allocate_canary(r, d, directives.canary)) return finish();
  r.ok = true;
  r.stage = StartupStage::serving;
  return finish();
}

}  // namespace headroom::engine
