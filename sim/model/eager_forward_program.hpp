#pragma once
// The allocation program of one step of a dense decoder run as plain, unfused PyTorch (eager mode,
// no torch.compile, no fused kernels): RMSNorm computed in fp32 with its temporaries, SiLU·mul as
// two tensors, attention by scaled_dot_product_attention over K/V gathered from a paged cache per
// sequence (prefill) or per batch padded to the longest block table (decode), GQA heads repeated.
// The temporaries, their sizes and their order are those of the plain-PyTorch decoder that recorded
// the real-H100 serving traces (../shared/gpu/record_serving.py, PyTorch 2.11): gathered K/V grow
// with each sequence's context, so a mixed prefill/decode stream fragments the caching allocator as
// real eager serving does (docs/serving-memory-model.md §4d). Unlike the compiled programs
// (forward_program.hpp), a step's program depends on every sequence's context, not only on T and N.
#include <cstdint>
#include <span>

#include "sim/core/units.hpp"
#include "sim/model/allocation_program.hpp"
#include "sim/model/model_config.hpp"
#include "sim/model/sampler_program.hpp"

namespace headroom::model {

// One sequence of the step: tokens fed now and tokens already in the KV cache.
struct EagerSequence {
  std::int64_t new_tokens = 0;
  std::int64_t context = 0;
};

// PyTorch's cuBLAS workspace on Hopper: CUBLAS_WORKSPACE_CONFIG default ":4096:8" (8 × 4096 KiB,
// torch/csrc/cuda/CublasHandlePool.cpp getChosenWorkspaceSize, sm_90), taken from the caching
// allocator at the first matmul and kept (the 33554432-byte block of the H100 recordings).
inline constexpr Bytes kCublasWorkspaceHopper = 32 * MiB;

// Which eager program: the plain-PyTorch decoder of the recordings, or SGLang's model code with
// its torch_native attention backend (docs/serving-memory-model.md §4d).
enum class EagerPath {
  plain_pytorch,        // record_serving.py: fp32 norms, unfused SiLU, K/V gathered with heads repeated
  sglang_torch_native,  // sgl-kernel's fused norms and SiluAndMul; attention per request over gathered K/V
};

struct EagerOptions {
  EagerPath path = EagerPath::plain_pytorch;
  std::int64_t block_size = 16;   // plain_pytorch: KV cache block (page) size in tokens
  Bytes cublas_workspace = kCublasWorkspaceHopper;  // plain_pytorch: taken by the first matmul
  int tp = 1;                     // sglang_torch_native: heads per rank
  std::int64_t context_len = 0;   // sglang_torch_native: req_to_token's row width (the context length)
};

// Throws InputError naming the field: at least one sequence, each with at least one new token and
// a context of at least 0, totals within docs/limits.md, a block size of at least 1, a dense
// (non-MoE, non-MLA) model.
void validate_eager_step(const ModelConfig& model, std::span<const EagerSequence> seqs, const EagerOptions& options);

// True when the step runs the decode path: every sequence feeds one token and one has a context
// (record_serving.py forward's `decode`); otherwise each sequence takes the prefill path.
bool eager_step_is_decode(std::span<const EagerSequence> seqs);

// plain_pytorch: the step: input ids, embedding, the layers, the last token's norm, logits, softmax and
// multinomial sampling; every transient is freed at the end. The cuBLAS workspace is a persistent
// buffer created by the first step that runs.
// sglang_torch_native: the forward, then the engine's sampler (`sampler`) over one row per sequence.
AllocationProgram eager_step_program(const ModelConfig& model, std::span<const EagerSequence> seqs,
                                     const EagerOptions& options = {}, const SamplerOptions& sampler = {});

}  // namespace headroom::model
