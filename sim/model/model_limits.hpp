#pragma once
// Limits on a model's dimensions and on the shape of one step (docs/limits.md says why each is
// where it is). Each sits well above every published model (largest known in the comment) and low
// enough that every size derived from them (parameter counts, bytes per tensor, KV bytes per
// token, activation bytes of a step) fits in 64 bits; they are checked before anything is built,
// since the weights and programs are built per layer and per expert.
#include <cstdint>

namespace headroom::model::limits {

inline constexpr std::int64_t kMaxLayers = 1024;                 // 126 (Llama-3.1-405B)
inline constexpr std::int64_t kMaxHiddenSize = 65536;            // 16,384 (Llama-3.1-405B)
inline constexpr std::int64_t kMaxIntermediateSize = 524288;     // 53,248 (Llama-3.1-405B); MoE experts too
inline constexpr std::int64_t kMaxHeads = 1024;                  // 128; key/value heads too
inline constexpr std::int64_t kMaxHeadDim = 1024;                // 256 (Gemma); each MLA head part too
inline constexpr std::int64_t kMaxLoraRank = 65536;              // 1,536 (DeepSeek-V3 q_lora_rank)
inline constexpr std::int64_t kMaxVocab = 4'194'304;             // 262,144 (Gemma 3)
inline constexpr std::int64_t kMaxExperts = 4096;                // 512 (Qwen3-Next); shared experts too
inline constexpr std::int64_t kMaxMtpLayers = 16;                // 1 (DeepSeek-V3)
inline constexpr std::int64_t kMaxWeightBlock = 65536;           // 128 (fp8 weight_block_size)
// No model has a context anywhere near a billion tokens (Llama 4 Scout: 10M); equal to the
// workload's kMaxTokenCount, so that any request a trace can hold has a model length to compare to.
inline constexpr std::int64_t kMaxPositionEmbeddings = 1'000'000'000;
// rope_scaling.factor: published configs use up to 40 (DeepSeek-V3's yarn); a rotary table of
// max_position_embeddings × factor positions stays within 64-bit bytes at any of the limits here.
inline constexpr double kMaxRopeFactor = 1024;

// One step: tokens in the batch (vLLM max_num_batched_tokens, SGLang chunked prefill, `headroom
// model --tokens`) and sequences in it. A step's largest activation, tokens × experts per token ×
// expert width × 2 bytes, stays below 2^57 at these; vLLM's largest default is 16,384 tokens and
// 1,024 sequences, and a prefill without chunking runs a whole context of up to 10M tokens.
inline constexpr std::int64_t kMaxStepTokens = std::int64_t{1} << 24;  // 16,777,216
inline constexpr std::int64_t kMaxStepSeqs = std::int64_t{1} << 20;    // 1,048,576

// Tensor-parallel ranks of one model (the scenario's model.tp); 8 is usual, 64 the largest seen.
inline constexpr std::int64_t kMaxTensorParallel = 1024;

}  // namespace headroom::model::limits
