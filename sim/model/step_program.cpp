#include "sim/model/step_program.hpp"

#include <fmt/format.h>

namespace headroom::model {

AllocationProgram step_program(const ModelConfig& model, const ForwardShape& shape, const ForwardOptions& forward,
                               const SamplerOptions& sampler) {
  ProgramBuilder builder(fmt::format("step {} T={} N={} decode={} tp={} sampler={}", model.name, shape.tokens,
                                     shape.seqs, shape.decode_seqs, shape.tp, sampler_kind_name(sampler.kind)),
                         model.layers);
  std::uint32_t hidden = emit_forward(builder, model, shape, forward);
  if (runs_sampler(forward))
    emit_sampler(builder, model, shape.seqs, forward.placement ? forward.placement->dense_tp : shape.tp, sampler);
  builder.free(hidden);
  return builder.finish();
}

}  // namespace headroom::model
