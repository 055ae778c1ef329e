#pragma once
// The scratch FlashInfer's CUTLASS fused-MoE kernel allocates on every call (docs/serving-memory-model.md
// §4b): flashinfer csrc/fused_moe/cutlass_backend/flashinfer_cutlass_fused_moe_binding.cu
// getWorkspaceInfo allocates one int8 tensor of the runner's workspace plus the source-to-
// destination map, sized by CutlassMoeFCRunner::getWorkspaceDeviceBufferSizes
// (cutlass_fused_moe_kernels.cuh, flashinfer commit fb28d724, August 2026), and drops it when the
// call returns.
#include <cstdint>

#include "sim/core/units.hpp"

namespace headroom::model {

// One call's problem, per rank: the gated (SwiGLU) non-min-latency path without LoRA, AWQ or
// DeepSeek FP8 block scales, which is what vLLM's FlashInferExperts runs for unquantized and FP8
// per-tensor experts.
struct FlashInferMoeCall {
  std::int64_t tokens = 0;        // num_rows: the tokens of this call
  std::int64_t hidden = 0;        // hidden_size
  std::int64_t inter = 0;         // inter_size: one expert's intermediate width on this rank (moe_I / tp)
  std::int64_t local_experts = 0; // num_experts_per_node: experts / ep
  std::int64_t top_k = 0;         // experts_per_token
  Bytes act_bytes = 2;            // sizeof(T): the GEMM input (2 for bf16, 1 for FP8 activations)
  Bytes gemm_out_bytes = 2;       // sizeof(UnfusedGemmOutputType) = the model dtype (BackBoneType)
};

// computeNumTokensPerBlock: the smallest power of two from 32 to 1024 with
// ceil(tokens / it) × experts <= it, else 1024.
std::int64_t flashinfer_moe_tokens_per_block(std::int64_t tokens, std::int64_t local_experts);

// Bytes of the call's workspace tensor: every token-sized region of getWorkspaceDeviceBufferSizes,
// each rounded up to 128 B (kCudaMemAlign), plus the [top_k × tokens] int32 map. The two
// TMA warp-specialized GEMM argument blocks and the CUTLASS scheduler workspace, which depend only
// on the experts and the kernel tiles chosen on the device, are left out (docs §4b).
Bytes flashinfer_cutlass_moe_workspace_bytes(const FlashInferMoeCall& call);

}  // namespace headroom::model
