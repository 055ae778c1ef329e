// LightLLM start-up (docs/serving-memory-model.md §3): TpPartBaseModel.__init__ — weights, the KV
// memory manager sized by mem_fraction, _check_mem_size, the request manager, decode CUDA graphs,
// then _check_max_len_infer (one prefill of batch_max_tokens as a single request) and empty_cache.
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/core/checked.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/startup.hpp"
#include "sim/model/step_program.hpp"

namespace headroom::engine {

std::int64_t lightllm_kv_tokens(Bytes free_after_weights, Bytes device_total, double mem_fraction, Bytes cell) {
  // mem_manager.py profile_size: (available − total × (1 − mem_fraction)) GiB × 2^30 / cell.
  double available = static_cast<double>(free_after_weights) - static_cast<double>(device_total) * (1.0 - mem_fraction);
  if (cell == 0) return 0;
  return static_cast<std::int64_t>(std::floor(available / static_cast<double>(cell)));
}

Bytes lightllm_req_to_token_bytes(std::int64_t running_max_req_size, std::int64_t batch_max_tokens,
                                  std::int64_t max_req_total_len) {
  // req_manager.py: torch.zeros((max_request_num + 1, max_sequence_length), dtype=torch.int32), with
  // max_request_num = running_max_req_size + 8 and max_seq_length = max_req_total_len + 8.
  auto rows = static_cast<Bytes>(running_max_req_size + 8 + 1);
  auto cols = static_cast<Bytes>(std::max(batch_max_tokens, max_req_total_len + 8));
  return rows * cols * 4;
}

namespace {

// basemodel.py _check_max_len_infer.
constexpr const char* kCheckMaxLenMessage =
    "check max len infer fail, you can try:1.Set the --mem_fraction or --max_total_token_num startup parameter "
    "to a smaller value.2.Set the --max_req_total_len to a smaller value.3.Set the --batch_max_tokens startup "
    "parameter to a smaller value.";

// LightLLM's start-up as TpPartBaseModel.__init__ runs it (basemodel.py): one method per step, in
// order; a step that fails records the failure in the result and the cascade stops there.
class LightllmStartup {
 public:
  LightllmStartup(const Deployment& d, LightllmConfig c, const StartupDirectives& directives)
      : d_(d), directives_(directives) {
    r_.engine = model::Engine::lightllm;
    r_.filled = resolve(c, d);
    r_.config = c;
    c_ = std::move(c);
    f_.batch_max_tokens = *c_.batch_max_tokens;
    f_.max_req_num = c_.running_max_req_size + 8;
    r_.kv_block_tokens = 1;
    r_.max_running_requests = c_.running_max_req_size;
    r_.sampler.kind = model::SamplerKind::native;  // torch top-k/top-p sorting in post-processing
    r_.memory = make_serving_memory(d);
    rules_ = &lightllm_version_rules(c_.version);
  }

  StartupResult run() {
    // init_distributed_env before the model (§9).
    if (init_distributed(r_, d_) && init_weights() && init_mem_manager() && check_mem_size() && init_req_manager() && init_custom() &&
        init_cudagraph() &&
        check_max_len_infer() && allocate_canary(r_, d_, directives_.canary)) {
      r_.ok = true;
      r_.stage = StartupStage::serving;
    }
    r_.figures = f_;
    finish_bytes(r_);
    return std::move(r_);
  }

 private:
  // _init_weights, with the free memory around it that the memory manager's profile_size reads.
  bool init_weights() {
    free_before_weights_ = measured_free(r_.memory);
    if (!load_weights(r_, d_, std::nullopt)) return false;
    f_.free_after_weights = measured_free(r_.memory);
    return true;
  }

  // MemoryManager at 2.0.0 and 3.0.0 (lightllm/common/mem_manager.py @ 8b8a4e13c, @ d9e3ba2ec;
  // §3.1): mem_state int32 [size], indexes int64 [size], then per layer one [size, 2·Hkv, D] tensor
  // (3.0.0) or L K tensors [size, Hkv, D] followed by L V tensors (2.0.0).
  bool init_mem_manager_per_layer(std::int64_t tokens, bool k_then_v) {
    const auto size = static_cast<Bytes>(tokens);
    const std::optional<Bytes> per_layer = checked_mul(size, layout_.bytes_per_token / static_cast<Bytes>(layout_.layers));
    if (!per_layer)
      throw EngineConfigError("max_total_token_num",
                              fmt::format("lightllm max_total_token_num: {} tokens of {} bytes do not fit in 64 bits",
                                          tokens, layout_.bytes_per_token));
    // The token bookkeeping is held (and counted) with the engine's buffers.
    if (!allocate_engine_buffer(r_, d_, size * 4, StartupStage::kv_cache_allocation) ||
        !allocate_engine_buffer(r_, d_, size * 8, StartupStage::kv_cache_allocation))
      return false;
    const bool allocated = k_then_v ? allocate_kv_cache(r_, d_, layout_.layers, *per_layer / 2) &&
                                          allocate_kv_cache(r_, d_, layout_.layers, *per_layer / 2)
                                    : allocate_kv_cache(r_, d_, layout_.layers, *per_layer);
    if (!allocated) return false;
    r_.log.push_back(fmt::format("kv cache size: {} tokens, {}", tokens, format_bytes(r_.bytes.kv_cache)));
    return true;
  }

  // _init_mem_manager (§3): one tensor [L, size + 1, 2·Hkv, D] (MLA: [L, size + 1, 1, 576]), sized by
  // mem_fraction, max_total_token_num, or a start-up policy.
  bool init_mem_manager() {
    layout_ = model::kv_layout(d_.model, engine_traits(model::Engine::lightllm).kv_pool, model::KvCacheDtype::model, d_.placement());
    f_.cell = layout_.bytes_per_token;
    std::int64_t tokens = c_.max_total_token_num
                              ? *c_.max_total_token_num
                              : lightllm_kv_tokens(f_.free_after_weights, d_.total(), c_.mem_fraction, f_.cell);
    if (directives_.kv_sizer) {
      std::optional<std::int64_t> decided = policy_decides_kv(tokens);
      if (!decided) return false;
      tokens = *decided;
    }
    const std::int64_t heads = layout_.mla ? 1 : 2 * layout_.kv_heads;
    if (tokens + 1 < 0) {
      fail(r_, StartupStage::kv_cache_sizing,
           fmt::format("Trying to create tensor with negative dimension {}: [{}, {}, {}, {}]", tokens + 1,
                       layout_.layers, tokens + 1, heads, layout_.head_dim));
      return false;
    }
    r_.kv_tokens = tokens;
    r_.kv_blocks = tokens;
    if (rules_->kv_layout != LightllmKvLayout::single_tensor)
      return init_mem_manager_per_layer(tokens, rules_->kv_layout == LightllmKvLayout::k_then_v_per_layer);
    const std::optional<Bytes> kv_bytes = checked_mul(static_cast<Bytes>(tokens + 1), layout_.bytes_per_token);
    if (!kv_bytes)
      throw EngineConfigError("max_total_token_num",
                              fmt::format("lightllm max_total_token_num: {} tokens of {} bytes do not fit in 64 bits",
                                          tokens, layout_.bytes_per_token));
    if (!allocate_kv_cache(r_, d_, 1, *kv_bytes)) return false;
    r_.log.push_back(fmt::format("kv cache size: {} tokens, {}", tokens, format_bytes(r_.bytes.kv_cache)));
    return true;
  }

  // A start-up policy's capacity in place of the engine's own (`tokens`).
  std::optional<std::int64_t> policy_decides_kv(std::int64_t tokens) {
    KvSizingInputs in{d_, r_};
    in.free_before_weights = free_before_weights_;
    in.free_after_weights = f_.free_after_weights;
    in.non_torch_at_start = r_.memory.device->total() - free_before_weights_;
    in.kv_bytes_per_token = f_.cell;
    in.prefill_tokens = f_.batch_max_tokens;
    in.batch_seqs = std::min(c_.running_max_req_size, f_.batch_max_tokens);
    in.max_graph_batch = c_.disable_cudagraph ? 0 : c_.graph_max_batch_size;
    if (!c_.disable_cudagraph)
      in.graph_sizes =
          lightllm_graph_batch_sizes(c_.graph_max_batch_size, c_.graph_split_batch_size, c_.graph_grow_step_size);
    in.workspace_bytes = [](std::int64_t) -> Bytes { return 0; };
    return decide_kv_tokens(directives_, in, tokens);
  }

  // _check_mem_size.
  bool check_mem_size() {
    if (directives_.skip_capacity_checks || !rules_->check_mem_size) return true;
    const std::int64_t tokens = r_.kv_tokens;
    if (tokens <= f_.batch_max_tokens) {
      fail(r_, StartupStage::kv_cache_sizing, "max_total_token_num must be greater than batch_max_tokens");
      return false;
    }
    const std::int64_t max_seq_length = c_.max_req_total_len + 8;
    if (max_seq_length > tokens) {
      fail(r_, StartupStage::kv_cache_sizing,
           fmt::format("max_total_token_num must be >= max_seq_length, got max_total_token_num={}, max_seq_length={}. "
                       "Try set --max_req_total_len a smaller value < {}.",
                       tokens, max_seq_length, tokens));
      return false;
    }
    return true;
  }

  // _init_req_manager: req_to_token_indexs.
  bool init_req_manager() {
    if (rules_->kv_layout == LightllmKvLayout::k_then_v_per_layer) {
      // req_manager.py @ 8b8a4e13c: req_state bool [N], req_to_token_indexs int32 [N, max_req_total_len
      // + 8], N = running_max_req_size + 8 (model_rpc.py).
      const auto rows = static_cast<Bytes>(c_.running_max_req_size + 8);
      return allocate_engine_buffer(r_, d_, rows, StartupStage::request_pool) &&
             allocate_request_pool(r_, d_, rows * static_cast<Bytes>(c_.max_req_total_len + 8) * 4);
    }
    return allocate_request_pool(
        r_, d_, lightllm_req_to_token_bytes(c_.running_max_req_size, f_.batch_max_tokens, c_.max_req_total_len));
  }

  // _init_custom (after _init_req_manager, _init_infer_layer and _init_some_value in
  // basemodel.py): the model's rotary tables, computed on the CPU and copied to the GPU; the KV pool
  // was sized before them, so they take from what it left (lightllm_rotary_tables).
  bool init_custom() {
    return allocate_rotary_tables(r_, d_, lightllm_rotary_tables(d_.model, c_.version, c_.max_req_total_len + 8),
                                  StartupStage::rotary_cache);
  }

  // _init_cudagraph: the decode graphs; the first forward creates the cuBLAS workspaces outside the
  // allocator (§5).
  bool init_cudagraph() {
    initialise_cublas(r_.memory, d_);
    if (c_.disable_cudagraph) return true;
    std::vector<int> sizes =
        lightllm_graph_batch_sizes(c_.graph_max_batch_size, c_.graph_split_batch_size, c_.graph_grow_step_size);
    // cuda_graph.py _capture_decode: self.graph[batch_size] = (graph_obj, infer_state,
    // model_output); the post layer's fp32 [bs, vocab] logits (ans_logics) stay with each graph.
    DecodeGraph graph;
    graph.forward = r_.forward;
    graph.logits = model::GraphLogitsOutput::kept;
    if (!capture_decode_graphs(r_, d_, sizes, graph)) return false;
    r_.graph_computes_logits = true;
    r_.graph_batch_sizes = sizes;
    return true;
  }

  // _check_max_len_infer: batch_max_tokens tokens as one request, softmax/argmax on its logits; then
  // torch.cuda.empty_cache().
  bool check_max_len_infer() {
    if (!c_.disable_check_max_len_infer) {
      model::SamplerOptions greedy;
      greedy.kind = model::SamplerKind::greedy;
      model::AllocationProgram check =
          model::step_program(d_.model, model::ForwardShape{f_.batch_max_tokens, 1, 0, d_.tp}, r_.forward, greedy);
      model::ProgramRun ran;
      if (!run_eager(r_, check, ran)) {
        r_.oom = *ran.oom;
        fail(r_, StartupStage::max_len_check, kCheckMaxLenMessage);
        return false;
      }
      f_.check_peak = ran.peak_allocated;
      r_.log.push_back(fmt::format("check max_len {} infer ok", f_.batch_max_tokens));
    }
    r_.memory.allocator->empty_cache();
    return true;
  }

  const Deployment& d_;
  LightllmConfig c_;
  const StartupDirectives& directives_;
  const LightllmVersionRules* rules_ = nullptr;
  StartupResult r_;
  LightllmFigures f_;
  Bytes free_before_weights_ = 0;
  model::KvLayout layout_;
};

}  // namespace

StartupResult lightllm_startup(const Deployment& d, LightllmConfig c, const StartupDirectives& directives) {
  return LightllmStartup(d, std::move(c), directives).run();
}

// LightLLM's rotary tables: built by each model class's _init_custom on the CPU and copied to the
// GPU after the KV pool and the request manager exist.
std::vector<model::RotaryTable> lightllm_rotary_tables(const model::ModelConfig& m, LightllmVersion version,
                                                       std::int64_t max_seq_length) {
  using model::Architecture;
  using model::RopeScaling;
  const std::int64_t max_position = m.max_position;
  // _init_to_get_rotary reads rope_scaling.factor whatever the type (1 without rope_scaling).
  const double factor = m.rope_scaling == RopeScaling::none ? 1.0 : m.rope_factor;
  std::int64_t rows = 0;
  int width = m.head_dim / 2;  // torch.outer(t, inv_freq): one value per rotated pair
  if (m.is_mla()) {
    // deepseek2/model.py _init_to_get_yarn_rotary: t = arange(max_position_embeddings) over
    // qk_rope_head_dim; v1.x keeps cos(freqs) [rows, rope / 2], 3.0.0 cat(freqs, freqs) [rows, rope].
    rows = max_position;
    width = version == LightllmVersion::current ? m.qk_rope_head_dim / 2 : m.qk_rope_head_dim;
  } else if (m.architecture == Architecture::mistral || m.architecture == Architecture::mixtral ||
             version == LightllmVersion::v2_0_0) {
    // mistral/model.py, mixtral/model.py _init_to_get_rotary (and llama/model.py @ 8b8a4e13c):
    // arange(max_position_embeddings × factor + 1024 × 64).
    rows = static_cast<std::int64_t>(std::ceil(static_cast<double>(max_position) * factor)) + 1024 * 64;
  } else {
    // llama/model.py _init_custom (qwen2, qwen3, qwen3_moe inherit it), by rope_scaling.
    switch (m.rope_scaling) {
      case RopeScaling::llama3:  // _init_to_get_llama3_rotary: arange(max(max_position, max_seq_length))
      case RopeScaling::dynamic:  // _init_to_get_dynamic_ntk_rotary: zeros((max(...), d / 2))
        rows = std::max(max_position, max_seq_length);
        break;
      case RopeScaling::yarn:
        if (version == LightllmVersion::current) {
          // _init_to_get_yarn_rotary: emb = cat(freqs, freqs) over arange(max(max_position, max_seq_length)).
          rows = std::max(max_position, max_seq_length);
          width = m.head_dim;
          break;
        }
        // 3.0.0 dispatches yarn only on the config's use_rope_yarn: the default rule below.
        [[fallthrough]];
      case RopeScaling::linear:
        if (version == LightllmVersion::current)
          throw EngineConfigError("kind", fmt::format("lightllm: model '{}' has rope_scaling type {}, which LightLLM's "
                                                      "llama/model.py _init_custom refuses (Unknown RoPE scaling type)",
                                                      m.name, model::rope_scaling_name(m.rope_scaling)));
        [[fallthrough]];
      case RopeScaling::none:
        // _init_to_get_rotary: arange(max(max_position_embeddings × factor + 1024 × 128, max_seq_length)).
        rows = std::max(static_cast<std::int64_t>(std::ceil(static_cast<double>(max_position) * factor)) + 1024 * 128, max_seq_length);
        break;
    }
  }
  std::vector<model::RotaryTable> tables;
  for (const char* name : {"_cos_cached", "_sin_cached"})
    tables.push_back({.name = name, .layers = {}, .positions = rows, .width = width, .dtype = m.dtype,
                      .before_attention = false});
  return tables;
}

}  // namespace headroom::engine
