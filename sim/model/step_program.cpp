#include "sim/model/step_program.hpp"

#include <fmt/format.h>

namespace headroom::model {

namespace {

std::string step_program_name(const ModelConfig& model, const ForwardShape& shape, const SamplerOptions& sampler) {
  return fmt::format("step {} T={} N={} decode={} tp={} sampler={}", model.name, shape.tokens, shape.seqs,
                     shape.decode_seqs, shape.tp, sampler_kind_name(sampler.kind));
}

void emit_step_ops(ProgramBuilder& builder, const ModelConfig& model, const ForwardShape& shape,
                   const ForwardOptions& forward, const SamplerOptions& sampler) {
  std::uint32_t hidden = emit_forward(builder, model, shape, forward);
  if (runs_sampler(forward))
    emit_sampler(builder, model, shape.seqs, forward.placement ? forward.placement->dense_tp : shape.tp, sampler);
  builder.free(hidden);
}

}  // namespace

AllocationProgram step_program(const ModelConfig& model, const ForwardShape& shape, const ForwardOptions& forward,
                               const SamplerOptions& sampler) {
  ProgramBuilder builder(step_program_name(model, shape, sampler), model.layers);
  emit_step_ops(builder, model, shape, forward, sampler);
  return builder.finish();
}

std::optional<AllocationProgram> refill_step_program(AllocationProgram&& like, const ModelConfig& model,
                                                     const ForwardShape& shape, const ForwardOptions& forward,
                                                     const SamplerOptions& sampler) {
  if (like.layers != model.layers) return std::nullopt;
  ProgramBuilder builder(step_program_name(model, shape, sampler), std::move(like));
  emit_step_ops(builder, model, shape, forward, sampler);
  if (!builder.refilled()) return std::nullopt;
  return builder.finish();
}

}  // namespace headroom::model
