#include "sim/model/eager_forward_program.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/model/dtype.hpp"
#include "sim/model/model_limits.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::model {

void validate_eager_step(const ModelConfig& m, std::span<const EagerSequence> seqs, const EagerOptions& o) {
  if (m.is_moe() || m.is_mla())
    throw InputError(fmt::format("eager program: {} is not a dense decoder (MoE and MLA models have no eager program)",
                                 m.name));
  if (seqs.empty()) throw InputError("seqs: expected at least 1 sequence, got 0");
  if (static_cast<std::int64_t>(seqs.size()) > limits::kMaxStepSeqs)
    throw InputError(fmt::format("seqs: {} is above the limit of {} for one step (docs/limits.md)", seqs.size(),
                                 limits::kMaxStepSeqs));
  std::int64_t tokens = 0;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    if (seqs[i].new_tokens < 1)
      throw InputError(fmt::format("seqs[{}].new_tokens: expected at least 1, got {}", i, seqs[i].new_tokens));
    if (seqs[i].context < 0 || seqs[i].context > m.max_position)
      throw InputError(fmt::format("seqs[{}].context: expected 0 to {} (max_position_embeddings), got {}", i,
                                   m.max_position, seqs[i].context));
    tokens += seqs[i].new_tokens;
    if (tokens > limits::kMaxStepTokens)
      throw InputError(fmt::format("tokens: more than the limit of {} for one step (docs/limits.md)",
                                   limits::kMaxStepTokens));
  }
  if (o.block_size < 1) throw InputError(fmt::format("block_size: expected at least 1, got {}", o.block_size));
  if (o.path == EagerPath::sglang_torch_native) {
    for (std::size_t i = 0; i < seqs.size(); ++i)
      if (seqs[i].context + seqs[i].new_tokens > o.context_len)
        throw InputError(fmt::format("seqs[{}]: {} tokens do not fit the context length of {}", i,
                                     seqs[i].context + seqs[i].new_tokens, o.context_len));
    (void)tensor_parallel_shard(m, o.tp);  // throws for a TP that does not fit the model
  }
}

bool eager_step_is_decode(std::span<const EagerSequence> seqs) {
  bool all_one = std::all_of(seqs.begin(), seqs.end(), [](const EagerSequence& s) { return s.new_tokens == 1; });
  bool any_context = std::any_of(seqs.begin(), seqs.end(), [](const EagerSequence& s) { return s.context > 0; });
  return all_one && any_context;
}

namespace {

constexpr Bytes kEagerInt64 = 8;    // index tensors: torch.tensor of Python ints, arange, randint
constexpr Bytes kEagerFloat32 = 4;  // RMSNorm's fp32 upcast, logits.float(), softmax
constexpr Bytes kEagerBool = 1;     // the decode attention mask
constexpr Bytes kEagerInt32 = 4;    // SGLang's req_to_token rows
// Small buffers scaled_dot_product_attention allocates around its kernel on the H100 recordings
// (PyTorch 2.11): two 8-byte philox seed/offset tensors and a 256-byte one for an unmasked call,
// two 2-byte ones and an [S] int64 one around a masked call.
constexpr Bytes kSdpaSeed = 8;
constexpr Bytes kSdpaUnmaskedAux = 256;
constexpr Bytes kSdpaMaskAux = 2;

Bytes eager_bytes(std::int64_t n) { return static_cast<Bytes>(n); }

// Emits the ops in the order record_serving.py's Python makes them. A name bound again (h, qkv,
// attn, gu, x) frees its previous tensor only once the new one exists (Python rebinding).
class EagerEmitter {
 public:
  EagerEmitter(ProgramBuilder& b, const ModelConfig& m, std::span<const EagerSequence> seqs, const EagerOptions& o)
      : b_(b), m_(m), seqs_(seqs), o_(o), e_(dtype_bytes(m.dtype)) {
    for (const EagerSequence& s : seqs) tokens_ += s.new_tokens;
    decode_ = eager_step_is_decode(seqs);
  }

  void emit() {
    std::int64_t T = tokens_, B = static_cast<std::int64_t>(seqs_.size());
    b_.set_layer(kNoLayer);
    std::uint32_t tables = kNoSlot, ctxs = kNoSlot;
    if (decode_) {
      // tables [B, maxb] int64 padded to the longest table, ctxs [B] int64.
      tables = b_.alloc(Tensor::block_table, eager_bytes(B) * eager_bytes(max_blocks()) * kEagerInt64);
      ctxs = b_.alloc(Tensor::positions, eager_bytes(B) * kEagerInt64);
    }
    std::uint32_t ids = b_.alloc(Tensor::input_ids, eager_bytes(T) * kEagerInt64);  // torch.randint
    x_ = b_.alloc(Tensor::hidden, rows(T, m_.hidden));                      // embed[ids]
    for (int l = 0; l < m_.layers; ++l) layer(l);
    b_.set_layer(kNoLayer);
    // last = torch.tensor(...); rms(x[last], norm) @ lm_head.t(), then .float(), softmax, multinomial.
    std::uint32_t last = b_.alloc(Tensor::last_index, eager_bytes(B) * kEagerInt64);
    std::uint32_t picked = b_.alloc(Tensor::sample_hidden, rows(B, m_.hidden));
    std::uint32_t normed = rms(B);
    b_.free(picked);
    std::uint32_t logits = b_.alloc(Tensor::logits, rows(B, m_.vocab));
    b_.free(normed);
    std::uint32_t logits32 = b_.alloc(Tensor::logits_fp32, eager_bytes(B) * eager_bytes(m_.vocab) * kEagerFloat32);
    b_.free(logits);
    std::uint32_t probs = b_.alloc(Tensor::probs, eager_bytes(B) * eager_bytes(m_.vocab) * kEagerFloat32);
    std::uint32_t sampled = b_.alloc(Tensor::sampled_ids, eager_bytes(B) * kEagerInt64);
    // multinomial's [B, V] fp32 scratch (the exponential draw), dropped before it returns.
    b_.free(b_.alloc(Tensor::exponential_noise, eager_bytes(B) * eager_bytes(m_.vocab) * kEagerFloat32));
    // forward returns: its locals die, then the caller drops the sampled ids.
    for (std::uint32_t slot : {ids, x_, h_, qkv_, attn_, gu_, last, logits32, probs, tables, ctxs, sampled})
      b_.free(slot);
  }

 private:
  Bytes rows(std::int64_t n, std::int64_t width) const { return eager_bytes(n) * eager_bytes(width) * e_; }

  std::int64_t blocks_of(std::int64_t tokens) const { return (tokens + o_.block_size - 1) / o_.block_size; }

  // Decode: the block table's width, ceil((context + 1) / block) of the longest sequence.
  std::int64_t max_blocks() const {
    std::int64_t most = 0;
    for (const EagerSequence& s : seqs_) most = std::max(most, blocks_of(s.context + 1));
    return most;
  }

  // rms(): x.float().pow(2).mean(-1, keepdim) → (x.float() * rsqrt(v + eps)).to(bf16) * weight.
  std::uint32_t rms(std::int64_t n) {
    Bytes wide = eager_bytes(n) * eager_bytes(m_.hidden) * kEagerFloat32, narrow = eager_bytes(n) * kEagerFloat32;
    std::uint32_t up = b_.alloc(Tensor::norm_fp32, wide);
    std::uint32_t sq = b_.alloc(Tensor::norm_square, wide);
    b_.free(up);
    std::uint32_t var = b_.alloc(Tensor::norm_variance, narrow);
    b_.free(sq);
    std::uint32_t up2 = b_.alloc(Tensor::norm_fp32, wide);
    std::uint32_t eps = b_.alloc(Tensor::norm_eps, narrow);
    std::uint32_t inv = b_.alloc(Tensor::norm_rsqrt, narrow);
    b_.free(eps);
    std::uint32_t scaled = b_.alloc(Tensor::norm_scaled, wide);
    b_.free(up2);
    b_.free(inv);
    std::uint32_t cast = b_.alloc(Tensor::norm_cast, rows(n, m_.hidden));
    b_.free(scaled);
    std::uint32_t out = b_.alloc(Tensor::hidden, rows(n, m_.hidden));  // * weight
    b_.free(cast);
    b_.free(var);
    return out;
  }

  // name = value: the old tensor dies once the new one is bound.
  void rebind(std::uint32_t& name, std::uint32_t value) {
    b_.free(name);
    name = value;
  }

  void layer(int l) {
    b_.set_layer(l);
    std::int64_t T = tokens_, Hq = m_.heads, Hkv = m_.kv_heads, D = m_.head_dim;
    rebind(h_, rms(T));
    rebind(qkv_, b_.alloc(Tensor::qkv, rows(T, (Hq + 2 * Hkv) * D)));
    // The first matmul of the process creates cuBLAS's workspace (a later step finds it held).
    if (l == 0) b_.alloc_persistent(Tensor::cublas_workspace, o_.cublas_workspace, kNoLayer);
    rebind(attn_, decode_ ? attend_decode() : attend_prefill());
    // x = x + attn @ o.t()
    std::uint32_t o = b_.alloc(Tensor::o_proj, rows(T, m_.hidden));
    std::uint32_t sum = b_.alloc(Tensor::residual_add, rows(T, m_.hidden));
    b_.free(o);
    rebind(x_, sum);
    rebind(h_, rms(T));
    // gu = h @ gate_up.t(); x = x + (F.silu(g) * u) @ down.t()
    rebind(gu_, b_.alloc(Tensor::gate_up, rows(T, 2 * std::int64_t{m_.intermediate})));
    std::uint32_t act = b_.alloc(Tensor::silu, rows(T, m_.intermediate));
    std::uint32_t prod = b_.alloc(Tensor::silu_mul, rows(T, m_.intermediate));
    b_.free(act);
    std::uint32_t down = b_.alloc(Tensor::down, rows(T, m_.hidden));
    b_.free(prod);
    std::uint32_t sum2 = b_.alloc(Tensor::residual_add, rows(T, m_.hidden));
    b_.free(down);
    rebind(x_, sum2);
  }

  // kv[0|1, li, blocks[pos // B], pos % B] = k|v: two index tensors live, a third made and dropped.
  void write_kv(std::int64_t n) {
    Bytes idx = eager_bytes(n) * kEagerInt64;
    std::uint32_t div = b_.alloc(Tensor::kv_index, idx);
    std::uint32_t block = b_.alloc(Tensor::kv_index, idx);
    b_.free(div);
    b_.free(b_.alloc(Tensor::kv_index, idx));
    b_.free(block);
  }

  // attend_prefill: per sequence, gather its blocks' K and V, repeat the KV heads to the query
  // heads, SDPA; the outputs are concatenated. Loop variables die when bound again.
  std::uint32_t attend_prefill() {
    std::int64_t Hq = m_.heads, Hkv = m_.kv_heads, D = m_.head_dim;
    std::uint32_t blocks = kNoSlot, pos = kNoSlot, kk = kNoSlot, vv = kNoSlot;
    outs_.clear();
    for (const EagerSequence& s : seqs_) {
      std::int64_t n = s.new_tokens, total = s.context + s.new_tokens, nb = blocks_of(total);
      rebind(blocks, b_.alloc(Tensor::block_table, eager_bytes(nb) * kEagerInt64));
      rebind(pos, b_.alloc(Tensor::positions, eager_bytes(n) * kEagerInt64));
      write_kv(n);
      write_kv(n);
      for (std::uint32_t* name : {&kk, &vv}) {
        std::uint32_t gathered = b_.alloc(Tensor::kv_gather, eager_bytes(nb * o_.block_size) * eager_bytes(Hkv * D) * e_);
        std::uint32_t repeated = b_.alloc(Tensor::kv_repeat, rows(total, Hq * D));
        b_.free(gathered);
        rebind(*name, repeated);
      }
      std::uint32_t seed = b_.alloc(Tensor::sdpa_aux, kSdpaSeed);
      std::uint32_t offset = b_.alloc(Tensor::sdpa_aux, kSdpaSeed);
      outs_.push_back(b_.alloc(Tensor::sdpa_out, rows(n, Hq * D)));  // kept by `outs`
      b_.free(b_.alloc(Tensor::sdpa_aux, kSdpaUnmaskedAux));
      b_.free(seed);
      b_.free(offset);
    }
    std::uint32_t cat = b_.alloc(Tensor::attn_cat, rows(tokens_, Hq * D));
    for (std::uint32_t out : outs_) b_.free(out);
    for (std::uint32_t slot : {blocks, pos, kk, vv}) b_.free(slot);
    return cat;
  }

  // attend_decode: one batched gather of every sequence's table padded to maxb blocks, a causal
  // mask [B, S] bool, repeated heads, one masked SDPA.
  std::uint32_t attend_decode() {
    std::int64_t B = static_cast<std::int64_t>(seqs_.size()), Hq = m_.heads, Hkv = m_.kv_heads, D = m_.head_dim;
    std::int64_t S = max_blocks() * o_.block_size;
    Bytes idx = eager_bytes(B) * kEagerInt64;
    std::uint32_t div = b_.alloc(Tensor::kv_index, idx);  // pos // BLOCK
    std::uint32_t blk = b_.alloc(Tensor::kv_index, idx);  // tables.gather(...)
    b_.free(div);
    b_.free(b_.alloc(Tensor::kv_index, idx));  // pos % BLOCK, for K
    b_.free(b_.alloc(Tensor::kv_index, idx));  // and for V
    std::uint32_t kk = b_.alloc(Tensor::kv_gather, eager_bytes(B * S) * eager_bytes(Hkv * D) * e_);
    std::uint32_t vv = b_.alloc(Tensor::kv_gather, eager_bytes(B * S) * eager_bytes(Hkv * D) * e_);
    std::uint32_t range = b_.alloc(Tensor::positions, eager_bytes(S) * kEagerInt64);
    std::uint32_t mask = b_.alloc(Tensor::attn_mask, eager_bytes(B * S) * kEagerBool);
    b_.free(range);
    for (std::uint32_t* name : {&kk, &vv}) rebind(*name, b_.alloc(Tensor::kv_repeat, rows(B * S, Hq * D)));
    std::uint32_t a1 = b_.alloc(Tensor::sdpa_aux, kSdpaMaskAux);
    std::uint32_t a2 = b_.alloc(Tensor::sdpa_aux, kSdpaMaskAux);
    std::uint32_t a3 = b_.alloc(Tensor::sdpa_aux, eager_bytes(S) * kEagerInt64);
    b_.free(a2);
    b_.free(a1);
    std::uint32_t seed = b_.alloc(Tensor::sdpa_aux, kSdpaSeed);
    std::uint32_t offset = b_.alloc(Tensor::sdpa_aux, kSdpaSeed);
    std::uint32_t out = b_.alloc(Tensor::sdpa_out, rows(B, Hq * D));
    b_.free(seed);
    b_.free(offset);
    b_.free(a3);
    for (std::uint32_t slot : {blk, kk, vv, mask}) b_.free(slot);
    return out;
  }

  ProgramBuilder& b_;
  const ModelConfig& m_;
  std::span<const EagerSequence> seqs_;
  const EagerOptions& o_;
  Bytes e_;
  std::int64_t tokens_ = 0;
  bool decode_ = false;
  std::uint32_t x_ = kNoSlot, h_ = kNoSlot, qkv_ = kNoSlot, attn_ = kNoSlot, gu_ = kNoSlot;
  std::vector<std::uint32_t> outs_;
};

// SGLang's Llama-style layer with --attention-backend torch_native
// (python/sglang/srt/layers/attention/torch_native_backend.py, main at 011a615): the projections and
// fused ops of §4a (sgl-kernel's fused_add_rmsnorm works in place, SiluAndMul writes [T, I]), the
// layer input held by the caller until the layer returns (as SGLang's other programs), and attention
// as a Python loop over the requests.
class TorchNativeEmitter {
 public:
  TorchNativeEmitter(ProgramBuilder& b, const ModelConfig& m, std::span<const EagerSequence> seqs,
                     const EagerOptions& o)
      : b_(b), m_(m), seqs_(seqs), o_(o), shard_(tensor_parallel_shard(m, o.tp)), e_(dtype_bytes(m.dtype)) {
    for (const EagerSequence& s : seqs) tokens_ += s.new_tokens;
    decode_ = eager_step_is_decode(seqs);
  }

  std::uint32_t emit() {
    b_.set_layer(kNoLayer);
    residual_ = b_.alloc(Tensor::residual, rows(tokens_, m_.hidden));
    hidden_ = b_.alloc(Tensor::hidden, rows(tokens_, m_.hidden));
    for (int l = 0; l < m_.layers; ++l) layer(l);
    b_.set_layer(kNoLayer);
    b_.free(residual_);
    return hidden_;
  }

 private:
  Bytes rows(std::int64_t n, std::int64_t width) const { return eager_bytes(n) * eager_bytes(width) * e_; }

  void layer(int l) {
    b_.set_layer(l);
    std::int64_t T = tokens_, D = m_.head_dim, hq = shard_.q_heads, hkv = shard_.kv_heads;
    std::uint32_t input = hidden_;
    std::uint32_t qkv = b_.alloc(Tensor::qkv, rows(T, (hq + 2 * hkv) * D));
    // forward_extend / forward_decode: o = torch.empty_like(q), [T, Hq·D].
    std::uint32_t out = b_.alloc(Tensor::attn_out, rows(T, hq * D));
    per_request(hq, hkv, D);
    std::uint32_t o = b_.alloc(Tensor::o_proj, rows(T, m_.hidden));
    b_.free(qkv);
    b_.free(out);
    std::uint32_t gu = b_.alloc(Tensor::gate_up, rows(T, 2 * std::int64_t{m_.intermediate} / o_.tp));
    std::uint32_t act = b_.alloc(Tensor::act, rows(T, m_.intermediate / o_.tp));
    b_.free(gu);
    std::uint32_t down = b_.alloc(Tensor::down, rows(T, m_.hidden));
    b_.free(act);
    b_.free(o);
    b_.free(input);
    hidden_ = down;
  }

  // _run_sdpa_forward_extend / _run_sdpa_forward_decode: per request, index_select of its
  // req_to_token row (int32, context_len wide), K and V gathered for its whole sequence
  // ([seq_len_kv, Hkv, D], k_cache[per_req_tokens]), SDPA with enable_gqa (heads not repeated) and
  // its fp32 log-sum-exp; extend also fills a query buffer as long as the sequence
  // (per_req_query_redudant, [Hq, seq_len_kv, D]) and gets an output as long. Loop variables die
  // when bound again; the last ones when the function returns.
  void per_request(std::int64_t hq, std::int64_t hkv, std::int64_t D) {
    std::uint32_t query = kNoSlot, row = kNoSlot, key = kNoSlot, value = kNoSlot, result = kNoSlot;
    for (const EagerSequence& s : seqs_) {
      std::int64_t kv_len = s.context + s.new_tokens, q_len = decode_ ? 1 : kv_len;
      if (!decode_) rebind_slot(query, b_.alloc(Tensor::sdpa_aux, rows(kv_len, hq * D)));
      rebind_slot(row, b_.alloc(Tensor::block_table, eager_bytes(o_.context_len) * kEagerInt32));
      rebind_slot(key, b_.alloc(Tensor::kv_gather, rows(kv_len, hkv * D)));
      rebind_slot(value, b_.alloc(Tensor::kv_gather, rows(kv_len, hkv * D)));
      std::uint32_t out = b_.alloc(Tensor::sdpa_out, rows(q_len, hq * D));
      b_.free(b_.alloc(Tensor::softmax_lse, eager_bytes(hq) * eager_bytes(q_len) * kEagerFloat32));
      rebind_slot(result, out);
    }
    for (std::uint32_t slot : {query, row, key, value, result}) b_.free(slot);
  }

  void rebind_slot(std::uint32_t& name, std::uint32_t value) {
    b_.free(name);
    name = value;
  }

  ProgramBuilder& b_;
  const ModelConfig& m_;
  std::span<const EagerSequence> seqs_;
  const EagerOptions& o_;
  TensorParallelShard shard_;
  Bytes e_;
  std::int64_t tokens_ = 0;
  bool decode_ = false;
  std::uint32_t residual_ = kNoSlot, hidden_ = kNoSlot;
};

}  // namespace

AllocationProgram eager_step_program(const ModelConfig& model, std::span<const EagerSequence> seqs,
                                     const EagerOptions& options, const SamplerOptions& sampler) {
  validate_eager_step(model, seqs, options);
  std::int64_t tokens = 0;
  for (const EagerSequence& s : seqs) tokens += s.new_tokens;
  ProgramBuilder builder(fmt::format("eager step {} T={} N={} {}{}", model.name, tokens, seqs.size(),
                                     eager_step_is_decode(seqs) ? "decode" : "prefill",
                                     options.path == EagerPath::sglang_torch_native ? " torch_native" : ""),
                         model.layers);
  if (options.path == EagerPath::sglang_torch_native) {
    TorchNativeEmitter emitter(builder, model, seqs, options);
    std::uint32_t hidden = emitter.emit();
    emit_sampler(builder, model, static_cast<std::int64_t>(seqs.size()), options.tp, sampler);
    builder.free(hidden);
    return builder.finish();
  }
  EagerEmitter emitter(builder, model, seqs, options);
  emitter.emit();
  return builder.finish();
}

}  // namespace headroom::model
