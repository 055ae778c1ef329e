#pragma once
// The allocation program of sampling one token for each of N sequences (docs/serving-memory-model.md
// §4a "Sampling"): the hidden rows of the sampled positions, lm_head logits (gathered across TP
// ranks), the fp32 copy the sampler works on, then the chosen path's [N, V] buffers.
#include <cstdint>
#include <string_view>

#include "sim/model/allocation_program.hpp"
#include "sim/model/model_config.hpp"

namespace headroom::model {

enum class SamplerKind {
  greedy,      // all requests at temperature 0: argmax over the fp32 logits (≈6 B × N × V)
  native,      // PyTorch top-k/top-p: sort, masks, scatter, softmax, noise (≈26–28 B × N × V; 38 B inside the sort at ≥ 128 rows)
  flashinfer,  // FlashInfer top_k_top_p_sampling_from_logits: masked logits, softmax (≈12–16 B × N × V)
};
std::string_view sampler_kind_name(SamplerKind kind);  // "greedy", "native", "flashinfer"
SamplerKind parse_sampler_kind(std::string_view text, std::string_view what);

struct SamplerOptions {
  SamplerKind kind = SamplerKind::native;
  // Native path: vLLM's apply_top_k_top_p ended with `logits_sort.scatter(...)`, a new [N, V] fp32
  // tensor (the 28 B × N × V of §4a); later versions scatter into the logits in place (24 B).
  bool scatter_in_place = false;
  // The logits come from a replayed CUDA graph that ran the logits processor (SGLang, LightLLM:
  // emit_graph_logits): the sampler starts from the graph's fp32 [N, V] logits and allocates
  // neither the sampled hidden rows, nor lm_head's output, nor the fp32 copy.
  bool logits_from_graph = false;
};

// Appends the sampler's ops to `builder` (all freed by the end). `tp` splits the lm_head rows.
// Throws InputError for seqs < 1 or a TP that does not fit the model.
void emit_sampler(ProgramBuilder& builder, const ModelConfig& model, std::int64_t seqs, int tp,
                  const SamplerOptions& options);

// Where the fp32 [seqs, V] logits of a decode graph's logits processor go (§1.5).
enum class GraphLogitsOutput {
  engine_buffer,  // copied into a buffer the engine made before the captures (SGLang's next_token_logits_buffer)
  dropped,        // a new tensor, freed at the end (the eager warm-up before LightLLM's capture)
  kept,           // a new tensor the engine keeps with the graph (LightLLM's model_output): persistent, one per size
};

// The logits processor inside a captured decode graph over `seqs` rows (docs/serving-memory-model.md
// §1.5): lm_head (gathered across TP ranks), then the fp32 [seqs, V] logits as `output` says. The
// transients are freed by the end.
void emit_graph_logits(ProgramBuilder& builder, const ModelConfig& model, std::int64_t seqs, int tp,
                       GraphLogitsOutput output);

AllocationProgram sampler_program(const ModelConfig& model, std::int64_t seqs, int tp = 1,
                                  const SamplerOptions& options = {});

}  // namespace headroom::model
