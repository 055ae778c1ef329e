#include "sim/model/flashinfer_moe_workspace.hpp"

#include <algorithm>

namespace headroom::model {

namespace {

// tensorrt_llm/common/workspace.h kCudaMemAlign and alignSize.
constexpr Bytes kWorkspaceAlign = 128;
Bytes workspace_aligned(Bytes size) { return (size + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign; }

}  // namespace

std::int64_t flashinfer_moe_tokens_per_block(std::int64_t tokens, std::int64_t local_experts) {
  for (std::int64_t per_block = 32; per_block <= 1024; per_block *= 2) {
    const std::int64_t blocks = (tokens + per_block - 1) / per_block;
    if (blocks * local_experts <= per_block) return per_block;
  }
  return 1024;
}

Bytes flashinfer_cutlass_moe_workspace_bytes(const FlashInferMoeCall& c) {
  const Bytes rows = static_cast<Bytes>(c.top_k * c.tokens);  // num_moe_inputs = experts_per_token × num_rows
  const Bytes H = static_cast<Bytes>(c.hidden), I = static_cast<Bytes>(c.inter), E = static_cast<Bytes>(c.local_experts);
  const std::int64_t per_block = flashinfer_moe_tokens_per_block(c.tokens, c.local_experts);
  const Bytes blocks = static_cast<Bytes>((c.tokens + per_block - 1) / per_block);  // num_blocks_per_seq
  const Bytes permuted_data = rows * H * c.act_bytes;
  const Bytes fc1_result = rows * I * c.act_bytes;        // the activation's output, back in T
  const Bytes fc2_result = rows * H * c.gemm_out_bytes;
  const Bytes glu_inter = 2 * rows * I * c.gemm_out_bytes;  // gated: interbuf_elems × 2
  const Bytes regions[] = {
      rows * 4,                                        // permuted_row_to_unpermuted_row (int)
      rows * 4,                                        // permuted_token_selected_experts (int)
      E * blocks * 4,                                  // blocked_expert_counts
      E * blocks * 4,                                  // blocked_expert_counts_cumsum
      E * static_cast<Bytes>(c.tokens) * 4,            // blocked_row_to_unpermuted_row
      (E + 1) * 8,                                     // expert_first_token_offset (int64)
      rows * 4,                                        // permuted_token_final_scales: finalize fused on SM90+
      std::max({permuted_data, fc2_result, fc1_result}),  // overlapped_gemm1_gemm2_inputs
      std::max({glu_inter, fc2_result, fc1_result}),      // overlapped_gemm1_gemm2_outputs
      E * 8,                                           // alpha_scale_ptr_array_fc1
      E * 8,                                           // alpha_scale_ptr_array_fc2
  };
  Bytes moe_workspace = 0;
  for (Bytes r : regions) moe_workspace += workspace_aligned(r);
  // getWorkspaceInfo: {moe workspace, src_to_dest_map = experts_per_token × num_rows int}, each aligned.
  return workspace_aligned(moe_workspace) + workspace_aligned(rows * 4);
}

}  // namespace headroom::model
