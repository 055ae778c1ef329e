#pragma once
// The allocation program of one forward pass (docs/serving-memory-model.md §4): per decoder layer the
// tensors vLLM's model code creates and drops, for dense (§4a), MoE (§4b) and MLA (§4c) models,
// per tensor-parallel rank (heads and intermediate widths divided by TP), bf16 activations as
// served. Where engines or versions differ the choice is a named option below.
#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/core/units.hpp"
#include "sim/model/allocation_program.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/model_config.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::model {

// One scheduler step: `tokens` tokens over `seqs` sequences, of which the first `decode_seqs` are
// decoding (one token each) and the rest prefill (the remaining tokens). vLLM orders decodes
// first (gpu_model_runner reorder_batch); only the MLA layers treat the two parts differently.
struct ForwardShape {
  std::int64_t tokens = 0;       // T
  std::int64_t seqs = 0;         // N
  std::int64_t decode_seqs = 0;  // of N
  int tp = 1;
};

// Throws InputError naming the field: tokens/seqs at least 1, decode_seqs within seqs, every
// prefill sequence at least one token, tokens == seqs when all decode.
void validate_forward_shape(const ForwardShape& shape);

enum class AttentionBackend { flash_attn, flashinfer };
std::string_view attention_backend_name(AttentionBackend backend);  // "flash-attn", "flashinfer"
AttentionBackend parse_attention_backend(std::string_view text, std::string_view what);

// Where the weight-absorbed MLA decode kernel writes its [B, heads, kv_lora_rank] output (§4c).
enum class DecodeOutBuffer {
  transient,  // a fresh tensor per call (vLLM before #37442 and after its revert #38359)
  per_layer,  // a zeroed `_decode_out` cached per layer, created lazily on the first decode (#37442)
  shared,     // one module-level buffer shared by all layers (#37799 / #37805)
};
std::string_view decode_out_buffer_name(DecodeOutBuffer mode);  // "transient", "per-layer", "shared"
DecodeOutBuffer parse_decode_out_buffer(std::string_view text, std::string_view what);

// vllm/v1/attention/backends/flashinfer.py FLASHINFER_WORKSPACE_BUFFER_SIZE = 256 MiB (§5).
inline constexpr Bytes kVllmFlashInferWorkspace = 256 * MiB;
// sglang python/sglang/srt/environ.py SGLANG_FLASHINFER_WORKSPACE_SIZE default 384 MiB (§5).
inline constexpr Bytes kSglangFlashInferWorkspace = 384 * MiB;
// The FlashInfer float workspace the engine allocates once; throws InputError for LightLLM,
// whose size this simulator does not know. The model tests' spelling: sim/ asks the engine's
// description (sim/engine EngineTraits flashinfer_workspace).
Bytes flashinfer_workspace_bytes(Engine engine);

// Which kernel runs the routed experts (§4b): vLLM's Triton fused_experts, or FlashInfer's CUTLASS
// fused MoE (vLLM `--moe-backend flashinfer_cutlass`, SGLang `--moe-runner-backend
// flashinfer_cutlass`), whose per-call scratch is flashinfer_moe_workspace.hpp's.
enum class MoeBackend { triton, flashinfer_cutlass };
std::string_view moe_backend_name(MoeBackend backend);  // "triton", "flashinfer_cutlass"
MoeBackend parse_moe_backend(std::string_view text, std::string_view what);

// vllm/envs.py VLLM_FUSED_MOE_CHUNK_SIZE default (§4b): fused_experts works on at most this many
// tokens at a time and sizes its caches for min(T, chunk).
inline constexpr std::int64_t kVllmFusedMoeChunkSize = 32768;

struct ForwardOptions {
  // The rank's groups under pipeline, expert or data parallelism (tensor_parallel.hpp); absent:
  // plain tensor parallelism of ForwardShape::tp. A pipeline stage runs its own layers and only
  // the last one samples.
  std::optional<RankPlacement> placement;
  // flash-attn: the varlen kernel allocates softmax_lse [Hq, T] fp32 and drops it (§4a).
  // flashinfer: no per-call buffer, a persistent workspace instead (attention_workspace).
  AttentionBackend attention = AttentionBackend::flash_attn;
  // flash-attn 3 split-KV: num_splits > 1 makes mha_fwd allocate fp32 out_accum [splits, Hq, T, D]
  // and softmax_lse_accum [splits, Hq, T] per call (hopper/flash_api.cpp); vLLM passes its
  // upper bound in full CUDA graphs so they are sized at capture (v1/attention/backends/
  // flash_attn.py, VLLM_FLASH_ATTN_MAX_NUM_SPLITS_FOR_CUDA_GRAPH = 32 since #25274, v0.11.0). 0: none.
  int attention_splits = 0;
  // Persistent attention-backend workspace, allocated once before the first forward (0: none).
  Bytes attention_workspace = 0;
  // Eager Python keeps each layer's input hidden state alive until the layer returns (the model's
  // loop still holds it): +2H B per token in the MLP phase, vllm#10517's ≈108 KiB/token for
  // Llama-3.1-8B. Off: the §4a liveness of the compiled graph, the input dies with attention.
  bool caller_holds_layer_input = false;
  // MoE (§4b): tokens per fused_experts chunk, moe_align_block_size BLOCK_SIZE_M (vLLM
  // fused_moe.py get_default_config uses 64 for large batches), and whether the experts write
  // into the hidden states (inplace=True) or a new [T, H] tensor. vLLM turns in-place off with
  // torch >= 2.9, whose custom ops cannot return an alias of an input (fused_moe utils.py
  // disable_inplace, vllm#26378); §4b's ≈56 KiB/token includes that [T, H] output.
  std::int64_t moe_chunk_tokens = kVllmFusedMoeChunkSize;
  MoeBackend moe_backend = MoeBackend::triton;
  int moe_block_m = 64;
  bool moe_output_inplace = false;
  // MLA prefill (§4c): pad V to the q/k head dim for attention kernels that need equal dims.
  bool mla_pad_v = false;
  // MLA decode output buffer (§4c, vLLM #37442/#37799): rows (max_num_seqs of the deployment)
  // and element size; 1024 rows × 128 heads × 512 × 4 B = 256 MiB per buffer, the doc's figure
  // (its exact rows and dtype are marked unsure there, hence parameters).
  DecodeOutBuffer mla_decode_out = DecodeOutBuffer::transient;
  std::int64_t mla_decode_out_rows = 1024;
  Bytes mla_decode_out_element_bytes = 4;
};

// Appends one forward's ops to `builder` and returns the slot of the final hidden states, left
// live (the sampler reads them). Every other transient is freed. Throws InputError for a bad
// shape, a TP that does not fit the model, or options that contradict each other.
// Whether this rank samples: only the last pipeline stage holds the lm_head (vLLM
// gpu_model_runner: non-last ranks return IntermediateTensors, no logits).
inline bool runs_sampler(const ForwardOptions& options) {
  return !options.placement || options.placement->pp_rank == options.placement->pp - 1;
}

std::uint32_t emit_forward(ProgramBuilder& builder, const ModelConfig& model, const ForwardShape& shape,
                           const ForwardOptions& options);

// One forward pass on its own: the final hidden states are freed at the end.
AllocationProgram forward_program(const ModelConfig& model, const ForwardShape& shape,
                                  const ForwardOptions& options = {});

}  // namespace headroom::model
