// FlashInfer's CUTLASS fused-MoE workspace (docs/serving-memory-model.md §4b) against worked numbers
// from CutlassMoeFCRunner::getWorkspaceDeviceBufferSizes (flashinfer cutlass_fused_moe_kernels.cuh,
// commit fb28d724) and the forward program vLLM's FlashInferExperts runs around it.
#include <catch2/catch.hpp>

#include <optional>

#include "sim/core/error.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/flashinfer_moe_workspace.hpp"
#include "sim/model/forward_program.hpp"

using namespace headroom;
using namespace headroom::model;

namespace {

// Requested bytes of the first allocation of `tensor` in layer 0, or nullopt when there is none.
std::optional<Bytes> first_fi_alloc(const AllocationProgram& p, Tensor tensor) {
  for (const ProgramOp& op : p.ops)
    if (op.kind == OpKind::alloc && op.tensor == tensor && op.layer == 0) return op.bytes;
  return std::nullopt;
}

ForwardShape fi_prefill(std::int64_t tokens) { return {.tokens = tokens, .seqs = 1, .decode_seqs = 0, .tp = 1}; }

}  // namespace

TEST_CASE("FlashInfer MoE: computeNumTokensPerBlock picks the smallest block that covers every expert") {
  CHECK(flashinfer_moe_tokens_per_block(1, 128) == 128);     // 1 block × 128 experts <= 128
  CHECK(flashinfer_moe_tokens_per_block(8192, 128) == 1024);  // 8 blocks × 128 = 1024
  CHECK(flashinfer_moe_tokens_per_block(100, 8) == 32);       // 4 × 8 <= 32
  CHECK(flashinfer_moe_tokens_per_block(65536, 256) == 1024);  // never fits: the cap
}

TEST_CASE("FlashInfer MoE workspace of Qwen3-30B-A3B at 8192 tokens: 517 MiB, two [k·T, H] bf16 regions") {
  // k·T = 65,536 rows; the overlapped GEMM inputs max(permuted bf16 [65536, 2048], fc2 [65536, 2048])
  // and outputs max(glu 2 × [65536, 768], fc2) are 256 MiB each; the routing maps 3 × 256 KiB,
  // blocked_row_to_unpermuted_row 128 × 8192 × 4 = 4 MiB, 8 blocks of 1024 tokens × 128 experts × 4 B
  // twice, the offsets 129 × 8 B (1,152 aligned), the alpha pointers 2 × 1 KiB, and the 256 KiB map.
  FlashInferMoeCall call{.tokens = 8192, .hidden = 2048, .inter = 768, .local_experts = 128, .top_k = 8};
  CHECK(flashinfer_cutlass_moe_workspace_bytes(call) == 542'125'184);
  // FP8 activations halve the permuted input, but the bf16 fc2 output keeps both regions at 256 MiB.
  call.act_bytes = 1;
  CHECK(flashinfer_cutlass_moe_workspace_bytes(call) == 542'125'184);
  // One decode token: every region rounded up to 128 B; the two 32 KiB GEMM regions dominate.
  FlashInferMoeCall one{.tokens = 1, .hidden = 2048, .inter = 768, .local_experts = 128, .top_k = 8};
  CHECK(flashinfer_cutlass_moe_workspace_bytes(one) == 70'784);
}

TEST_CASE("FlashInfer MoE in the forward program: the workspace per layer call on top of workspace13 and the output") {
  ModelConfig qwen = catalogue_model("Qwen3-30B-A3B");
  ForwardOptions fi;
  fi.moe_backend = MoeBackend::flashinfer_cutlass;
  AllocationProgram p = forward_program(qwen, fi_prefill(8192), fi);
  CHECK(check_program(p).empty());
  CHECK(first_fi_alloc(p, Tensor::flashinfer_moe_workspace) == Bytes{542'125'184});
  CHECK(first_fi_alloc(p, Tensor::moe_workspace13) == Bytes{8192 * 2048 * 2});
  CHECK(!first_fi_alloc(p, Tensor::moe_cache13));  // no Triton caches
  CHECK(!first_fi_alloc(p, Tensor::moe_a1q));      // bf16 experts read the hidden states
  // FP8 per-tensor experts quantize the input first: [T, H] in one byte.
  ModelConfig fp8 = qwen;
  fp8.quantization.method = WeightQuantization::Method::fp8_tensor;
  CHECK(first_fi_alloc(forward_program(fp8, fi_prefill(8192), fi), Tensor::moe_a1q) == Bytes{8192 * 2048});
  // Peak: residual and o_proj (2 × 32 MiB), router logits 2 MiB, top-k weights and ids 2 × 256 KiB,
  // workspace13 and the output 2 × 32 MiB, the workspace: 678,964,352 B, against the Triton
  // path's 472,682,492 (§4b).
  CHECK(program_figures(p).peak == 678'964'352);
  CHECK(program_figures(forward_program(qwen, fi_prefill(8192))).peak == 472'682'492);
}

TEST_CASE("FlashInfer MoE: formats whose workspace is not sized are refused") {
  ModelConfig qwen = catalogue_model("Qwen3-30B-A3B");
  qwen.quantization.method = WeightQuantization::Method::nvfp4;
  ForwardOptions fi;
  fi.moe_backend = MoeBackend::flashinfer_cutlass;
  CHECK_THROWS_WITH(forward_program(qwen, fi_prefill(16), fi),
                    "moe_backend flashinfer_cutlass: nvfp4 experts are not modelled (unquantized and fp8 per-tensor "
                    "experts are)");
  CHECK_THROWS_WITH(parse_moe_backend("cutlass", "moe_backend"),
                    "moe_backend: expected one of triton, flashinfer_cutlass, got 'cutlass'");
}
