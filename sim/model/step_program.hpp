#pragma once
// One engine step: the forward pass, then sampling from its final hidden states, which stay
// alive until the step ends (vLLM execute_model holds them while it samples), so the step's
// peak is max(forward peak, [T, H] + sampler peak).
#include "sim/model/forward_program.hpp"
#include "sim/model/sampler_program.hpp"

namespace headroom::model {

AllocationProgram step_program(const ModelConfig& model, const ForwardShape& shape, const ForwardOptions& forward = {},
                               const SamplerOptions& sampler = {});

}  // namespace headroom::model
