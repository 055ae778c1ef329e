#pragma once
// One engine step: the forward pass, then sampling from its final hidden states, which stay
// alive until the step ends (vLLM execute_model holds them while it samples), so the step's
// peak is max(forward peak, [T, H] + sampler peak).
#include <optional>

#include "sim/model/forward_program.hpp"
#include "sim/model/sampler_program.hpp"

namespace headroom::model {

AllocationProgram step_program(const ModelConfig& model, const ForwardShape& shape, const ForwardOptions& forward = {},
                               const SamplerOptions& sampler = {});

// The step program for `shape` made from `like`, the step program of another shape of the same
// structure (ProgramBuilder's refilling: the same calls, other sizes), or nothing when the
// structures differ. Equal to step_program(model, shape, forward, sampler) op for op; cheaper,
// since only the sizes are written. Consumes `like` either way.
std::optional<AllocationProgram> refill_step_program(AllocationProgram&& like, const ModelConfig& model,
                                                     const ForwardShape& shape, const ForwardOptions& forward = {},
                                                     const SamplerOptions& sampler = {});

}  // namespace headroom::model
