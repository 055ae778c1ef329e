#pragma once
// An allocation program: the ordered allocations and frees of the tensors one forward pass (or one
// sampler call) makes through the caching allocator, as plain data. Each op names a slot of a
// pre-sized table, so running a program is a tight loop that allocates nothing
// (program_runner.hpp). The builders are forward_program.hpp and sampler_program.hpp.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"

namespace headroom::model {

// What a tensor is, in the engines' own variable names (docs/serving-memory-model.md §4).
enum class Tensor : std::uint8_t {
  // persistent across the layers of one forward (§4a)
  residual,
  hidden,
  // attention, MHA/GQA (§4a, §4b)
  qkv,
  q_norm,
  k_norm,
  attn_out,
  softmax_lse,
  attn_out_accum,
  softmax_lse_accum,
  o_proj,
  // dense MLP (§4a)
  gate_up,
  act,
  down,
  // fused MoE (§4b)
  router_logits,
  topk_weights,
  topk_ids,
  token_expert_indices,
  moe_sorted_token_ids,
  moe_expert_ids,
  moe_num_tokens_post_pad,
  moe_cache13,
  moe_cache2,
  moe_out,
  moe_a1q,                   // FlashInfer CUTLASS MoE: the FP8-quantized input (§4b)
  moe_workspace13,           // FlashInfer CUTLASS MoE: the modular kernel's workspace13 [M, H]
  flashinfer_moe_workspace,  // FlashInfer CUTLASS MoE: the kernel's own scratch per call
  shared_gate_up,
  shared_act,
  shared_out,
  // multi-head latent attention (§4c)
  mla_qkv_a,
  mla_q,
  mla_kv_b,
  mla_k,
  mla_v,
  mla_ql_nope,
  mla_q_pe,
  mla_decode_kernel_out,
  mla_decode_lse,
  mla_decode_out_buffer,
  mla_v_up,
  // buffers an attention backend keeps for the life of the engine (§5)
  attention_workspace,
  // sampler (§4a)
  sample_hidden,
  logits_partial,
  logits_gather,
  logits,
  logits_fp32,
  greedy_ids,
  sort_values,
  sort_indices,
  sort_reverse_indices,
  sort_cub_temp,
  top_k_mask,
  top_p_probs,
  top_p_mask,
  masked_logits,
  probs,
  exponential_noise,
  sampled_ids,
  // plain-PyTorch (eager, unfused) paths: eager_forward_program.hpp
  input_ids,
  block_table,
  positions,
  kv_index,
  norm_fp32,
  norm_square,
  norm_variance,
  norm_eps,
  norm_rsqrt,
  norm_scaled,
  norm_cast,
  kv_gather,
  kv_repeat,
  attn_mask,
  sdpa_aux,
  sdpa_out,
  attn_cat,
  residual_add,
  silu,
  silu_mul,
  last_index,
  cublas_workspace,
};

std::string_view tensor_name(Tensor tensor);

enum class OpKind : std::uint8_t { alloc, free };

// A slot id for a size-0 allocation: PyTorch hands out no block for 0 bytes, so no op is emitted.
inline constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();
// Layer index of ops outside the decoder layers (embedding output, final norm, sampler).
inline constexpr std::int32_t kNoLayer = -1;

// A persistent buffer's name, the same in every program of a model: the tensor and the layer
// that owns it (kNoLayer for engine-wide buffers such as a workspace).
std::uint32_t persistent_key(Tensor tensor, std::int32_t owner_layer);

struct ProgramOp {
  Bytes bytes = 0;           // alloc: the requested (unrounded) size; free: 0
  // Transient tensors: index into the runner's slot table. Persistent ones: persistent_key(), so
  // that a buffer created by one program (a decode step) is found by the next (another shape).
  std::uint32_t slot = 0;
  std::int32_t layer = kNoLayer;
  OpKind kind = OpKind::alloc;
  Tensor tensor = Tensor::hidden;
  // alloc only: a buffer the engine keeps after the step (a workspace, a per-layer cached buffer).
  // It has no free in the program, and a later run that finds it held skips it (lazy creation).
  bool persistent = false;
};

struct AllocationProgram {
  std::string name;
  std::vector<ProgramOp> ops;
  std::uint32_t slots = 0;       // transient slot table size
  std::uint32_t persistent = 0;  // persistent allocations among the ops
  int layers = 0;                // ops carry layer indices in [0, layers) or kNoLayer
};

// Pure arithmetic over a program, no allocator: live requested bytes at each op.
struct ProgramFigures {
  Bytes peak = 0;                  // most requested bytes live at once
  std::size_t peak_op = 0;         // the allocation that reached it
  Bytes persistent = 0;            // bytes of persistent allocations (left live at the end)
  std::int64_t allocations = 0;
  std::vector<Bytes> layer_peak;   // per decoder layer: most bytes live during its ops
  std::vector<Bytes> layer_entry;  // per decoder layer: bytes live when its first op runs
  std::vector<std::size_t> layer_peak_op;
};
ProgramFigures program_figures(const AllocationProgram& program);

// Structural check: every slot is allocated before it is freed, never twice while live, every
// non-persistent allocation is freed by the end, no persistent buffer is freed or allocated twice.
// Returns "" when sound, else a description of the first fault.
std::string check_program(const AllocationProgram& program);

// Emits ops with slot bookkeeping: freed slots are reused, so the table stays as small as the
// most tensors live at once (plus the persistent ones).
//
// Refilling: a builder made from an existing program (`like`) expects the same calls that built it,
// only with other sizes, and writes just the sizes into its ops: the slots it hands out are those
// of `like`, which a fresh build of the same calls would hand out too (slots follow the order of the
// calls alone). This is the step program for a new token count without per-op bookkeeping or heap
// work. A call that does not match the next op (another kind, tensor, layer or slot, an op more or
// less: the program's structure changed, e.g. a size became 0) ends the refill: refilled() is then
// false and the rest of the calls are ignored.
class ProgramBuilder {
 public:
  ProgramBuilder(std::string name, int layers);
  ProgramBuilder(std::string name, AllocationProgram&& like);

  void set_layer(std::int32_t layer) { layer_ = layer; }
  std::int32_t layer() const { return layer_; }

  // Returns the slot, or kNoSlot for 0 bytes.
  std::uint32_t alloc(Tensor tensor, Bytes bytes) {
    // Refilling, the usual case inline: the next op is this allocation and takes the new size.
    if (refilling_ && bytes != 0 && !mismatch_ && cursor_ < program_.ops.size()) {
      ProgramOp& op = program_.ops[cursor_];
      if (op.kind == OpKind::alloc && op.tensor == tensor && !op.persistent && op.layer == layer_) {
        op.bytes = bytes;
        ++cursor_;
        return op.slot;
      }
    }
    return emit_alloc(tensor, bytes);
  }
  // A persistent buffer owned by `owner_layer` (kNoLayer: engine-wide); nothing for 0 bytes.
  void alloc_persistent(Tensor tensor, Bytes bytes, std::int32_t owner_layer);
  void free(std::uint32_t slot) {  // kNoSlot is ignored
    if (refilling_ && slot != kNoSlot && !mismatch_ && cursor_ < program_.ops.size()) {
      const ProgramOp& op = program_.ops[cursor_];
      if (op.kind == OpKind::free && op.slot == slot && op.layer == layer_) {
        ++cursor_;
        return;
      }
    }
    emit_free(slot);
  }

  // Throws std::logic_error when a non-persistent slot is still live, or when a refill did not
  // match (check refilled() first).
  AllocationProgram finish();
  // A refill's calls matched every op of `like`, and no more: finish() returns the program a fresh
  // build of the same calls would have made. False for a builder that is not refilling.
  bool refilled() const { return refilling_ && !mismatch_ && cursor_ == program_.ops.size(); }

 private:
  std::uint32_t take_slot();
  // alloc and free past their inline refill case: building, or a refill that does not match.
  std::uint32_t emit_alloc(Tensor tensor, Bytes bytes);
  void emit_free(std::uint32_t slot);
  // Refilling: the next op if it is `kind` of `tensor` in the current layer, else nullptr (and the
  // refill has failed).
  ProgramOp* next_like(OpKind kind, Tensor tensor, bool persistent);

  AllocationProgram program_;
  bool refilling_ = false;
  bool mismatch_ = false;
  std::size_t cursor_ = 0;  // refilling: the op the next call must match
  std::int32_t layer_ = kNoLayer;
  std::vector<std::uint32_t> free_slots_;  // freed slots, the last freed reused first
  std::vector<std::uint8_t> live_;         // per slot: 1 while live
  std::vector<Tensor> slot_tensor_;        // per slot: what it holds now (named again by its free)
};

}  // namespace headroom::model
