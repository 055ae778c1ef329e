#include "sim/model/forward_program.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/core/enum_names.hpp"
#include "sim/core/error.hpp"
#include "sim/model/flashinfer_moe_workspace.hpp"
#include "sim/model/model_limits.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::model {

void validate_forward_shape(const ForwardShape& s) {
  if (s.tokens < 1) throw InputError(fmt::format("tokens: expected at least 1, got {}", s.tokens));
  if (s.tokens > limits::kMaxStepTokens)
    throw InputError(fmt::format("tokens: {} is above the limit of {} for one step (docs/limits.md)", s.tokens,
                                 limits::kMaxStepTokens));
  if (s.seqs < 1) throw InputError(fmt::format("seqs: expected at least 1, got {}", s.seqs));
  if (s.seqs > limits::kMaxStepSeqs)
    throw InputError(fmt::format("seqs: {} is above the limit of {} for one step (docs/limits.md)", s.seqs,
                                 limits::kMaxStepSeqs));
  if (s.seqs > s.tokens)
    throw InputError(fmt::format("seqs: {} sequences need at least as many tokens, got {} tokens", s.seqs, s.tokens));
  if (s.decode_seqs < 0 || s.decode_seqs > s.seqs)
    throw InputError(fmt::format("decode_seqs: expected 0 to {} (the sequences in the step), got {}", s.seqs,
                                 s.decode_seqs));
  if (s.decode_seqs == s.seqs && s.tokens != s.seqs)
    throw InputError(fmt::format("decode_seqs: all {} sequences decode one token each, so tokens must be {}, got {}",
                                 s.seqs, s.seqs, s.tokens));
  if (s.tp < 1 || s.tp > limits::kMaxTensorParallel)
    throw InputError(fmt::format("tp: expected 1 to {}, got {}", limits::kMaxTensorParallel, s.tp));
}

namespace {

constexpr std::array<EnumName<AttentionBackend>, 3> kAttentionBackendNames{{
    {AttentionBackend::flash_attn, "flash-attn"},
    {AttentionBackend::flash_attn, "flash_attn", Spelling::alias},
    {AttentionBackend::flashinfer, "flashinfer"},
}};

constexpr std::array<EnumName<DecodeOutBuffer>, 4> kDecodeOutBufferNames{{
    {DecodeOutBuffer::transient, "transient"},
    {DecodeOutBuffer::per_layer, "per-layer"},
    {DecodeOutBuffer::per_layer, "per_layer", Spelling::alias},
    {DecodeOutBuffer::shared, "shared"},
}};

constexpr std::array<EnumName<MoeBackend>, 2> kMoeBackendNames{{
    {MoeBackend::triton, "triton"},
    {MoeBackend::flashinfer_cutlass, "flashinfer_cutlass"},
}};

}  // namespace

std::string_view attention_backend_name(AttentionBackend backend) {
  return enum_name(kAttentionBackendNames, backend);
}

AttentionBackend parse_attention_backend(std::string_view text, std::string_view what) {
  return parse_enum(kAttentionBackendNames, text, what);
}

std::string_view decode_out_buffer_name(DecodeOutBuffer mode) { return enum_name(kDecodeOutBufferNames, mode); }

DecodeOutBuffer parse_decode_out_buffer(std::string_view text, std::string_view what) {
  return parse_enum(kDecodeOutBufferNames, text, what);
}

std::string_view moe_backend_name(MoeBackend backend) { return enum_name(kMoeBackendNames, backend); }

MoeBackend parse_moe_backend(std::string_view text, std::string_view what) {
  return parse_enum(kMoeBackendNames, text, what);
}

Bytes flashinfer_workspace_bytes(Engine engine) {
  if (engine == Engine::vllm) return kVllmFlashInferWorkspace;
  if (engine == Engine::sglang) return kSglangFlashInferWorkspace;
  throw InputError(
      fmt::format("attention backend flashinfer: no FlashInfer workspace size is known for {}", engine_name(engine)));
}

namespace {

Bytes count(std::int64_t n) { return static_cast<Bytes>(n); }

constexpr Bytes kFloat32 = 4;  // softmax_lse, router top-k weights
constexpr Bytes kInt32 = 4;    // top-k ids, moe_align_block_size outputs

class ForwardEmitter {
 public:
  ForwardEmitter(ProgramBuilder& b, const ModelConfig& m, const ForwardShape& s, const ForwardOptions& o)
      : b_(b), m_(m), s_(s), o_(o), shard_(o.placement ? rank_shard(m, *o.placement) : tensor_parallel_shard(m, s.tp)), e_(dtype_bytes(m.dtype)) {}

  std::uint32_t emit() {
    b_.set_layer(kNoLayer);
    // Allocated once when the backend is built, before any forward (flashinfer.py / SGLang
    // FlashInferAttnBackend); a rerun of the program finds it held.
    b_.alloc_persistent(Tensor::attention_workspace, o_.attention_workspace, kNoLayer);
    // Persistent across layers (§4a): the embedding output becomes layer 0's residual and
    // input_layernorm writes the first normalised hidden states; later fused add+RMSNorm calls
    // update both in place.
    residual_ = b_.alloc(Tensor::residual, rows(s_.tokens, m_.hidden));
    hidden_ = b_.alloc(Tensor::hidden, rows(s_.tokens, m_.hidden));
    // A pipeline stage runs its own layers; the first receives the embeddings, the others the
    // previous stage's hidden states and residual, of the same shapes.
    for (int l = shard_.first_layer; l < shard_.end_layer; ++l) layer(l);
    b_.set_layer(kNoLayer);
    // The final norm is in place; the residual dies when the model's forward returns.
    b_.free(residual_);
    return hidden_;
  }

 private:
  // Bytes of a [n, width] activation tensor.
  Bytes rows(std::int64_t n, std::int64_t width) const { return count(n) * count(width) * e_; }

  void layer(int l) {
    b_.set_layer(l);
    std::uint32_t input = hidden_;
    std::uint32_t attn = m_.is_mla() ? mla_attention(l) : attention();
    // The layer's input dies once self_attn returns (compiled liveness, §4a), or when the layer
    // returns (eager Python: the model's loop variable still holds it).
    if (!o_.caller_holds_layer_input) b_.free(input);
    mlp_input_ = attn;
    std::uint32_t out =
        m_.is_moe_layer(l) ? moe() : mlp(m_.intermediate / shard_.tp, Tensor::gate_up, Tensor::act, Tensor::down);
    if (out != attn) b_.free(attn);
    if (o_.caller_holds_layer_input) b_.free(input);
    hidden_ = out;
  }

  // §4a/§4b: vLLM LlamaAttention / Qwen3Attention.forward.
  std::uint32_t attention() {
    std::int64_t T = s_.tokens, D = m_.head_dim, hq = shard_.q_heads, hkv = shard_.kv_heads;
    std::uint32_t qkv = b_.alloc(Tensor::qkv, rows(T, (hq + 2 * hkv) * D));  // RoPE in place on q, k views
    std::uint32_t qn = kNoSlot, kn = kNoSlot;
    if (m_.has_qk_norm()) {
      // Qwen3: q_norm / k_norm are RMSNorm without residual, which return a new tensor (§4b).
      qn = b_.alloc(Tensor::q_norm, rows(T, hq * D));
      kn = b_.alloc(Tensor::k_norm, rows(T, hkv * D));
    }
    // The attention layer allocates its output [T, Hq·D] before calling the kernel (§4a).
    std::uint32_t out = b_.alloc(Tensor::attn_out, rows(T, hq * D));
    if (o_.attention == AttentionBackend::flash_attn) {
      // flash-attn mha_varlen_fwd returns softmax_lse [Hq, T] fp32; the wrapper drops it (§4a).
      std::uint32_t lse = b_.alloc(Tensor::softmax_lse, count(hq) * count(T) * kFloat32);
      // FA3 with num_splits > 1: the split accumulators, dropped when mha_fwd returns (§1.5).
      const Bytes splits = o_.attention_splits > 1 ? count(o_.attention_splits) : 0;
      std::uint32_t out_accum = b_.alloc(Tensor::attn_out_accum, splits * count(hq) * count(T) * count(D) * kFloat32);
      std::uint32_t lse_accum = b_.alloc(Tensor::softmax_lse_accum, splits * count(hq) * count(T) * kFloat32);
      b_.free(lse_accum);
      b_.free(out_accum);
      b_.free(lse);
    }
    std::uint32_t o = b_.alloc(Tensor::o_proj, rows(T, m_.hidden));  // row-parallel: [T, H], all-reduced in place
    b_.free(qkv);
    b_.free(qn);
    b_.free(kn);
    b_.free(out);
    return o;
  }

  // §4a: vLLM LlamaMLP.forward rebinding x: gate_up → act (gate_up dies) → down (act dies).
  std::uint32_t mlp(std::int64_t width, Tensor gate_up, Tensor act, Tensor down) {
    std::int64_t T = s_.tokens;
    std::uint32_t gu = b_.alloc(gate_up, rows(T, 2 * width));
    std::uint32_t a = b_.alloc(act, rows(T, width));
    b_.free(gu);
    std::uint32_t d = b_.alloc(down, rows(T, m_.hidden));
    b_.free(a);
    return d;
  }

  // §4b/§4c: the sparse MoE block with vLLM's Triton fused_experts.
  std::uint32_t moe() {
    std::int64_t T = s_.tokens, E = m_.experts, k = m_.experts_per_token;
    std::uint32_t shared = kNoSlot;
    if (m_.shared_experts > 0) {
      // DeepseekV2MoE.forward runs the shared experts (a dense MLP n_shared × moe_I wide, TP-split)
      // first; their [T, H] output waits for the routed experts (§4c).
      shared = mlp(std::int64_t{m_.shared_experts} * m_.moe_intermediate / shard_.tp, Tensor::shared_gate_up,
                   Tensor::shared_act, Tensor::shared_out);
    }
    // The gate is replicated: router logits [T, E] in the activation dtype.
    std::uint32_t router = b_.alloc(Tensor::router_logits, rows(T, E));
    std::uint32_t weights = b_.alloc(Tensor::topk_weights, count(T) * count(k) * kFloat32);
    std::uint32_t ids = b_.alloc(Tensor::topk_ids, count(T) * count(k) * kInt32);
    if (!m_.is_deepseek()) {
      // fused_topk: topk_softmax also fills token_expert_indices [T, k] int32, dropped at once.
      b_.free(b_.alloc(Tensor::token_expert_indices, count(T) * count(k) * kInt32));
    }
    if (o_.moe_backend == MoeBackend::flashinfer_cutlass) {
      std::uint32_t out = flashinfer_cutlass_experts();
      b_.free(weights);
      b_.free(ids);
      b_.free(router);
      b_.free(shared);
      return out;
    }
    // fused_experts_impl: w13 has N = 2·moe_I/tp rows per rank, K = H; caches sized for
    // M = min(T, chunk): cache13 = M·k·max(N, K) (GEMM1 and GEMM2 outputs share it), cache2 =
    // M·k·N/2 (§4b).
    std::int64_t N = 2 * std::int64_t{m_.moe_intermediate} / shard_.moe_tp, K = m_.hidden;
    std::int64_t M = std::min(T, o_.moe_chunk_tokens);
    std::uint32_t cache13 = b_.alloc(Tensor::moe_cache13, count(M) * count(k) * count(std::max(N, K)) * e_);
    std::uint32_t cache2 = b_.alloc(Tensor::moe_cache2, count(M) * count(k) * count(N / 2) * e_);
    std::uint32_t out = o_.moe_output_inplace ? mlp_input_ : b_.alloc(Tensor::moe_out, rows(T, m_.hidden));
    // Per chunk, moe_align_block_size: sorted_token_ids of numel + E·(BLOCK_M − 1) int32,
    // expert_ids of ceil(that / BLOCK_M), num_tokens_post_pad of one. The previous chunk's
    // buffers die when the new ones are bound (Python rebinding).
    std::uint32_t sorted = kNoSlot, experts = kNoSlot, post_pad = kNoSlot;
    for (std::int64_t begin = 0; begin < T; begin += o_.moe_chunk_tokens) {
      std::int64_t chunk = std::min(o_.moe_chunk_tokens, T - begin);
      std::int64_t padded = chunk * k + E * (o_.moe_block_m - 1);
      std::uint32_t s = b_.alloc(Tensor::moe_sorted_token_ids, count(padded) * kInt32);
      std::uint32_t x = b_.alloc(Tensor::moe_expert_ids, count((padded + o_.moe_block_m - 1) / o_.moe_block_m) * kInt32);
      std::uint32_t p = b_.alloc(Tensor::moe_num_tokens_post_pad, kInt32);
      b_.free(sorted);
      b_.free(experts);
      b_.free(post_pad);
      sorted = s, experts = x, post_pad = p;
    }
    b_.free(cache13);
    b_.free(cache2);
    b_.free(sorted);
    b_.free(experts);
    b_.free(post_pad);
    b_.free(weights);
    b_.free(ids);
    b_.free(router);
    // The shared output is added into the routed output in place, then dies.
    b_.free(shared);
    return out;
  }

  // §4b: vLLM's modular kernel with FlashInferExperts (fused_moe/flashinfer_cutlass_moe.py, vllm
  // commit 01f004eb): FP8 per-tensor experts take the input quantized to FP8 first (prepare's
  // moe_kernel_quantize_input); workspace_shapes asks for workspace13 (M, K) and the (M, K)
  // output; per chunk of at most VLLM_FUSED_MOE_CHUNK_SIZE tokens, flashinfer_cutlass_fused_moe
  // allocates its scratch and drops it when it returns.
  std::uint32_t flashinfer_cutlass_experts() {
    std::int64_t T = s_.tokens, M = std::min(T, o_.moe_chunk_tokens);
    const Bytes act = m_.quantization.method == WeightQuantization::Method::fp8_tensor ? 1 : e_;
    std::uint32_t a1q = act < e_ ? b_.alloc(Tensor::moe_a1q, count(T) * count(m_.hidden) * act) : kNoSlot;
    std::uint32_t ws13 = b_.alloc(Tensor::moe_workspace13, rows(M, m_.hidden));
    std::uint32_t out = o_.moe_output_inplace ? mlp_input_ : b_.alloc(Tensor::moe_out, rows(T, m_.hidden));
    FlashInferMoeCall call{.tokens = M,
                           .hidden = m_.hidden,
                           .inter = std::int64_t{m_.moe_intermediate} / shard_.moe_tp,
                           .local_experts = shard_.local_experts,
                           .top_k = m_.experts_per_token,
                           .act_bytes = act,
                           .gemm_out_bytes = e_};
    b_.free(b_.alloc(Tensor::flashinfer_moe_workspace, flashinfer_cutlass_moe_workspace_bytes(call)));
    b_.free(ws13);
    b_.free(a1q);
    return out;
  }

  // §4c: vLLM's MLA attention. Decode tokens take the weight-absorbed path, prefill tokens the
  // "MHA" path through kv_b_proj; prefill runs first (MLACommonImpl.forward).
  std::uint32_t mla_attention(int l) {
    std::int64_t T = s_.tokens, Td = s_.decode_seqs, Tp = T - Td, hq = shard_.q_heads;
    std::int64_t qk = m_.qk_nope_head_dim + m_.qk_rope_head_dim;
    // fused_qkv_a_proj (replicated): [T, q_lora + kv_lora + rope]; without q_lora only the kv part.
    std::uint32_t qkv_a = b_.alloc(Tensor::mla_qkv_a, rows(T, m_.q_lora_rank + m_.kv_lora_rank + m_.qk_rope_head_dim));
    std::uint32_t q = b_.alloc(Tensor::mla_q, rows(T, hq * qk));  // q_b_proj (or q_proj)
    std::uint32_t out = b_.alloc(Tensor::attn_out, rows(T, hq * m_.v_head_dim));
    if (Tp > 0) {
      std::uint32_t kv_b = b_.alloc(Tensor::mla_kv_b, rows(Tp, hq * (m_.qk_nope_head_dim + m_.v_head_dim)));
      std::uint32_t k = b_.alloc(Tensor::mla_k, rows(Tp, hq * qk));  // cat(k_nope, k_pe broadcast)
      std::uint32_t v = b_.alloc(Tensor::mla_v, rows(Tp, hq * (o_.mla_pad_v ? qk : m_.v_head_dim)));
      if (o_.attention == AttentionBackend::flash_attn)
        b_.free(b_.alloc(Tensor::softmax_lse, count(hq) * count(Tp) * kFloat32));
      b_.free(v);
      b_.free(k);
      b_.free(kv_b);
    }
    if (Td > 0) {
      // q_nope · W_UK → ql_nope [B, Hq, kv_lora]; q_pe [B, Hq, rope]; the MQA kernel over the
      // 576-wide latent writes [B, Hq, kv_lora] and an lse [B, Hq] fp32; · W_UV → [B, Hq, v].
      std::uint32_t ql = b_.alloc(Tensor::mla_ql_nope, rows(Td, hq * m_.kv_lora_rank));
      std::uint32_t pe = b_.alloc(Tensor::mla_q_pe, rows(Td, hq * m_.qk_rope_head_dim));
      std::uint32_t kernel_out = kNoSlot;
      Bytes buffer = count(o_.mla_decode_out_rows) * count(hq) * count(m_.kv_lora_rank) * o_.mla_decode_out_element_bytes;
      switch (o_.mla_decode_out) {
        case DecodeOutBuffer::transient:
          kernel_out = b_.alloc(Tensor::mla_decode_kernel_out, rows(Td, hq * m_.kv_lora_rank));
          break;
        case DecodeOutBuffer::per_layer:
          // #37442: `self._decode_out` created lazily in forward_mqa of each layer and kept.
          b_.alloc_persistent(Tensor::mla_decode_out_buffer, buffer, l);
          break;
        case DecodeOutBuffer::shared:
          // #37799: one buffer for all layers, created by the first layer that decodes.
          if (!shared_decode_out_) b_.alloc_persistent(Tensor::mla_decode_out_buffer, buffer, kNoLayer);
          shared_decode_out_ = true;
          break;
      }
      std::uint32_t lse = b_.alloc(Tensor::mla_decode_lse, count(Td) * count(hq) * kFloat32);
      std::uint32_t v_up = b_.alloc(Tensor::mla_v_up, rows(Td, hq * m_.v_head_dim));  // copied into attn_out
      b_.free(v_up);
      b_.free(lse);
      b_.free(kernel_out);
      b_.free(pe);
      b_.free(ql);
    }
    std::uint32_t o = b_.alloc(Tensor::o_proj, rows(T, m_.hidden));
    b_.free(out);
    b_.free(q);
    b_.free(qkv_a);
    return o;
  }

  ProgramBuilder& b_;
  const ModelConfig& m_;
  const ForwardShape& s_;
  const ForwardOptions& o_;
  TensorParallelShard shard_;
  Bytes e_;  // activation element bytes
  std::uint32_t residual_ = kNoSlot;
  std::uint32_t hidden_ = kNoSlot;
  std::uint32_t mlp_input_ = kNoSlot;  // the MLP/MoE block's input (attention output): in-place experts write it
  bool shared_decode_out_ = false;
};

void validate_options(const ModelConfig& m, const ForwardShape& s, const ForwardOptions& o) {
  if (o.moe_chunk_tokens < 1)
    throw InputError(fmt::format("moe_chunk_tokens: expected at least 1, got {}", o.moe_chunk_tokens));
  if (o.moe_block_m < 1) throw InputError(fmt::format("moe_block_m: expected at least 1, got {}", o.moe_block_m));
  // FlashInferExperts._supports_quant_scheme: unquantized and FP8 per-tensor are the schemes whose
  // workspace this simulator sizes (FP8 block scales and NVFP4 add regions it does not model).
  using Q = WeightQuantization::Method;
  if (o.moe_backend == MoeBackend::flashinfer_cutlass && m.is_moe() && m.quantization.method != Q::none &&
      m.quantization.method != Q::fp8_tensor)
    throw InputError(fmt::format("moe_backend flashinfer_cutlass: {} experts are not modelled (unquantized and "
                                 "fp8 per-tensor experts are)",
                                 quantization_name(m.quantization.method)));
  if (m.is_mla() && o.mla_decode_out != DecodeOutBuffer::transient) {
    if (o.mla_decode_out_rows < 1)
      throw InputError(fmt::format("mla_decode_out_rows: expected at least 1, got {}", o.mla_decode_out_rows));
    if (s.decode_seqs > o.mla_decode_out_rows)
      throw InputError(fmt::format("decode_seqs: {} decoding sequences do not fit the {}-row _decode_out buffer",
                                   s.decode_seqs, o.mla_decode_out_rows));
    if (o.mla_decode_out_element_bytes < 1)
      throw InputError("mla_decode_out_element_bytes: expected at least 1, got 0");
  }
}

}  // namespace

std::uint32_t emit_forward(ProgramBuilder& builder, const ModelConfig& model, const ForwardShape& shape,
                           const ForwardOptions& options) {
  validate_forward_shape(shape);
  validate_options(model, shape, options);
  ForwardEmitter emitter(builder, model, shape, options);
  return emitter.emit();
}

AllocationProgram forward_program(const ModelConfig& model, const ForwardShape& shape, const ForwardOptions& options) {
  ProgramBuilder builder(fmt::format("forward {} T={} N={} decode={} tp={}", model.name, shape.tokens, shape.seqs,
                                     shape.decode_seqs, shape.tp),
                         model.layers);
  std::uint32_t hidden = emit_forward(builder, model, shape, options);
  builder.free(hidden);
  return builder.finish();
}

}  // namespace headroom::model
