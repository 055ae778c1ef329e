#include "sim/model/allocation_program.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace headroom::model {

std::string_view tensor_name(Tensor tensor) {
  switch (tensor) {
    case Tensor::residual: return "residual";
    case Tensor::hidden: return "hidden";
    case Tensor::qkv: return "qkv";
    case Tensor::q_norm: return "q_norm";
    case Tensor::k_norm: return "k_norm";
    case Tensor::attn_out: return "attn_out";
    case Tensor::softmax_lse: return "softmax_lse";
    case Tensor::attn_out_accum: return "out_accum";
    case Tensor::softmax_lse_accum: return "softmax_lse_accum";
    case Tensor::o_proj: return "o_proj";
    case Tensor::gate_up: return "gate_up";
    case Tensor::act: return "act";
    case Tensor::down: return "down";
    case Tensor::router_logits: return "router_logits";
    case Tensor::topk_weights: return "topk_weights";
    case Tensor::topk_ids: return "topk_ids";
    case Tensor::token_expert_indices: return "token_expert_indices";
    case Tensor::moe_sorted_token_ids: return "sorted_token_ids";
    case Tensor::moe_expert_ids: return "expert_ids";
    case Tensor::moe_num_tokens_post_pad: return "num_tokens_post_pad";
    case Tensor::moe_cache13: return "cache13";
    case Tensor::moe_cache2: return "cache2";
    case Tensor::moe_out: return "moe_out";
    case Tensor::moe_a1q: return "a1q";
    case Tensor::moe_workspace13: return "workspace13";
    case Tensor::flashinfer_moe_workspace: return "flashinfer_moe_workspace";
    case Tensor::shared_gate_up: return "shared_gate_up";
    case Tensor::shared_act: return "shared_act";
    case Tensor::shared_out: return "shared_out";
    case Tensor::mla_qkv_a: return "qkv_a";
    case Tensor::mla_q: return "q";
    case Tensor::mla_kv_b: return "kv_b";
    case Tensor::mla_k: return "k";
    case Tensor::mla_v: return "v";
    case Tensor::mla_ql_nope: return "ql_nope";
    case Tensor::mla_q_pe: return "q_pe";
    case Tensor::mla_decode_kernel_out: return "mqa_out";
    case Tensor::mla_decode_lse: return "mqa_lse";
    case Tensor::mla_decode_out_buffer: return "_decode_out";
    case Tensor::mla_v_up: return "v_up";
    case Tensor::attention_workspace: return "attention_workspace";
    case Tensor::sample_hidden: return "sample_hidden";
    case Tensor::logits_partial: return "logits_partial";
    case Tensor::logits_gather: return "logits_gather";
    case Tensor::logits: return "logits";
    case Tensor::logits_fp32: return "logits_fp32";
    case Tensor::greedy_ids: return "greedy_ids";
    case Tensor::sort_values: return "logits_sort";
    case Tensor::sort_indices: return "logits_idx";
    case Tensor::sort_reverse_indices: return "reverse_indices";
    case Tensor::sort_cub_temp: return "cub_temp_storage";
    case Tensor::top_k_mask: return "top_k_mask";
    case Tensor::top_p_probs: return "probs_sort";
    case Tensor::top_p_mask: return "top_p_mask";
    case Tensor::masked_logits: return "masked_logits";
    case Tensor::probs: return "probs";
    case Tensor::exponential_noise: return "exponential_noise";
    case Tensor::sampled_ids: return "sampled_ids";
    case Tensor::input_ids: return "input_ids";
    case Tensor::block_table: return "block_table";
    case Tensor::positions: return "positions";
    case Tensor::kv_index: return "kv_index";
    case Tensor::norm_fp32: return "norm_fp32";
    case Tensor::norm_square: return "norm_square";
    case Tensor::norm_variance: return "norm_variance";
    case Tensor::norm_eps: return "norm_eps";
    case Tensor::norm_rsqrt: return "norm_rsqrt";
    case Tensor::norm_scaled: return "norm_scaled";
    case Tensor::norm_cast: return "norm_cast";
    case Tensor::kv_gather: return "kv_gather";
    case Tensor::kv_repeat: return "kv_repeat";
    case Tensor::attn_mask: return "attn_mask";
    case Tensor::sdpa_aux: return "sdpa_aux";
    case Tensor::sdpa_out: return "sdpa_out";
    case Tensor::attn_cat: return "attn_cat";
    case Tensor::residual_add: return "residual_add";
    case Tensor::silu: return "silu";
    case Tensor::silu_mul: return "silu_mul";
    case Tensor::last_index: return "last_index";
    case Tensor::cublas_workspace: return "cublas_workspace";
  }
  return "?";
}

std::uint32_t persistent_key(Tensor tensor, std::int32_t owner_layer) {
  return (std::uint32_t{static_cast<std::uint8_t>(tensor)} << 16) | static_cast<std::uint32_t>(owner_layer + 1);
}

ProgramFigures program_figures(const AllocationProgram& program) {
  ProgramFigures f;
  std::size_t layers = static_cast<std::size_t>(program.layers);
  f.layer_peak.assign(layers, 0);
  f.layer_entry.assign(layers, 0);
  f.layer_peak_op.assign(layers, 0);
  std::vector<bool> entered(layers, false);
  std::vector<Bytes> size(program.slots, 0);
  Bytes live = 0;
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const ProgramOp& op = program.ops[i];
    bool in_layer = op.layer >= 0 && static_cast<std::size_t>(op.layer) < layers;
    std::size_t l = in_layer ? static_cast<std::size_t>(op.layer) : 0;
    if (in_layer && !entered[l]) {
      entered[l] = true;
      f.layer_entry[l] = live;
      f.layer_peak[l] = live;
    }
    if (op.kind == OpKind::alloc) {
      if (op.persistent)
        f.persistent += op.bytes;
      else
        size[op.slot] = op.bytes;
      live += op.bytes;
      ++f.allocations;
      if (live > f.peak) f.peak = live, f.peak_op = i;
      if (in_layer && live > f.layer_peak[l]) f.layer_peak[l] = live, f.layer_peak_op[l] = i;
    } else {
      live -= size[op.slot];
      size[op.slot] = 0;
    }
  }
  return f;
}

std::string check_program(const AllocationProgram& program) {
  std::vector<std::uint8_t> live(program.slots, 0);
  std::vector<std::size_t> allocated_at(program.slots, 0);
  std::vector<std::uint32_t> persistent_keys;
  std::uint32_t persistent = 0;
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const ProgramOp& op = program.ops[i];
    if (op.layer != kNoLayer && (op.layer < 0 || op.layer >= program.layers))
      return fmt::format("op {}: layer {} outside [0, {})", i, op.layer, program.layers);
    if (op.kind == OpKind::alloc && op.bytes == 0)
      return fmt::format("op {} ({}): allocation of 0 bytes", i, tensor_name(op.tensor));
    if (op.persistent) {
      if (op.kind != OpKind::alloc) return fmt::format("op {} ({}): a persistent free", i, tensor_name(op.tensor));
      for (std::uint32_t k : persistent_keys)
        if (k == op.slot)
          return fmt::format("op {} ({}, layer {}): persistent buffer allocated twice", i, tensor_name(op.tensor),
                             op.layer);
      persistent_keys.push_back(op.slot);
      ++persistent;
      continue;
    }
    if (op.slot >= program.slots)
      return fmt::format("op {}: slot {} outside the table of {}", i, op.slot, program.slots);
    std::uint8_t& s = live[op.slot];
    if (op.kind == OpKind::alloc) {
      if (s != 0) return fmt::format("op {} ({}): slot {} allocated while live", i, tensor_name(op.tensor), op.slot);
      s = 1;
      allocated_at[op.slot] = i;
    } else {
      if (s == 0) return fmt::format("op {} ({}): slot {} freed while not live", i, tensor_name(op.tensor), op.slot);
      s = 0;
    }
  }
  if (persistent != program.persistent)
    return fmt::format("{} persistent allocations, the program declares {}", persistent, program.persistent);
  for (std::uint32_t slot = 0; slot < program.slots; ++slot)
    if (live[slot] == 1) {
      const ProgramOp& op = program.ops[allocated_at[slot]];
      return fmt::format("op {} ({}, layer {}): never freed", allocated_at[slot], tensor_name(op.tensor), op.layer);
    }
  return "";
}

ProgramBuilder::ProgramBuilder(std::string name, int layers) {
  program_.name = std::move(name);
  program_.layers = layers;
}

ProgramBuilder::ProgramBuilder(std::string name, AllocationProgram&& like)
    : program_(std::move(like)), refilling_(true) {
  program_.name = std::move(name);
}

ProgramOp* ProgramBuilder::next_like(OpKind kind, Tensor tensor, bool persistent) {
  if (mismatch_) return nullptr;
  if (cursor_ < program_.ops.size()) {
    ProgramOp& op = program_.ops[cursor_];
    if (op.kind == kind && op.tensor == tensor && op.persistent == persistent && op.layer == layer_) {
      ++cursor_;
      return &op;
    }
  }
  mismatch_ = true;
  return nullptr;
}

std::uint32_t ProgramBuilder::take_slot() {
  if (!free_slots_.empty()) {
    std::uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  live_.push_back(0);
  slot_tensor_.push_back(Tensor::hidden);
  return program_.slots++;
}

std::uint32_t ProgramBuilder::emit_alloc(Tensor tensor, Bytes bytes) {
  if (bytes == 0) return kNoSlot;
  if (refilling_) {
    ProgramOp* op = next_like(OpKind::alloc, tensor, false);
    if (!op) return kNoSlot;
    op->bytes = bytes;
    return op->slot;
  }
  std::uint32_t slot = take_slot();
  live_[slot] = 1;
  slot_tensor_[slot] = tensor;
  program_.ops.push_back(ProgramOp{bytes, slot, layer_, OpKind::alloc, tensor, false});
  return slot;
}

void ProgramBuilder::alloc_persistent(Tensor tensor, Bytes bytes, std::int32_t owner_layer) {
  if (bytes == 0) return;
  if (refilling_) {
    ProgramOp* op = next_like(OpKind::alloc, tensor, true);
    if (!op) return;
    if (op->slot != persistent_key(tensor, owner_layer)) {
      mismatch_ = true;
      return;
    }
    op->bytes = bytes;
    return;
  }
  program_.ops.push_back(ProgramOp{bytes, persistent_key(tensor, owner_layer), layer_, OpKind::alloc, tensor, true});
  ++program_.persistent;
}

void ProgramBuilder::emit_free(std::uint32_t slot) {
  if (slot == kNoSlot) return;
  if (refilling_) {
    if (mismatch_ || cursor_ >= program_.ops.size()) {
      mismatch_ = true;
      return;
    }
    // The op's tensor is what the slot held, so kind, slot and layer name the free.
    const ProgramOp& op = program_.ops[cursor_];
    if (op.kind != OpKind::free || op.slot != slot || op.layer != layer_) {
      mismatch_ = true;
      return;
    }
    ++cursor_;
    return;
  }
  if (slot >= live_.size() || live_[slot] != 1)
    throw std::logic_error(fmt::format("program '{}': free of slot {} that is not a live transient", program_.name, slot));
  live_[slot] = 0;
  free_slots_.push_back(slot);
  program_.ops.push_back(ProgramOp{0, slot, layer_, OpKind::free, slot_tensor_[slot], false});
}

AllocationProgram ProgramBuilder::finish() {
  if (refilling_) {
    if (!refilled())
      throw std::logic_error(fmt::format("program '{}': the refill did not match the program's ops", program_.name));
    return std::move(program_);
  }
  for (std::uint32_t s = 0; s < live_.size(); ++s)
    if (live_[s] == 1)
      throw std::logic_error(fmt::format("program '{}': slot {} is still live at the end", program_.name, s));
  return std::move(program_);
}

}  // namespace headroom::model
