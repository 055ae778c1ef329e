#include "sim/policy/kv_budget.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/engine_registry.hpp"

namespace headroom::policy {

std::int64_t static_fraction_tokens(model::Engine engine, const engine::KvSizingInputs& in, double fraction) {
  return engine::engine_traits(engine).static_fraction_tokens(in, fraction);
}

std::int64_t ProfiledBudget::kv_bytes() const {
  return static_cast<std::int64_t>(requested) -
         static_cast<std::int64_t>(weights + activation_peak + non_torch_increase + graph_estimate + margin + buffer);
}

std::variant<ProfiledMeasurement, std::string> measure_profiled(engine::KvSizingInputs& in, double fraction) {
  engine::StartupResult& r = in.startup;
  const device::Device& dev = *r.memory.device;
  const Bytes total = dev.total();
  engine::ProfileMeasurement p = engine::profile_forward(r, in.deployment, in.prefill_tokens, in.batch_seqs);
  if (!p.ok)
    return fmt::format("the profile forward ({} tokens over {} sequences) ran out of memory allocating {}: {}",
                       in.prefill_tokens, in.batch_seqs, p.oom_tensor, p.oom->message(in.deployment.gpu.vendor == "amd"));
  ProfiledMeasurement m;
  m.budget.requested = static_cast<Bytes>(std::floor(static_cast<double>(total) * fraction));
  m.budget.weights = r.bytes.weights + r.bytes.rotary_cache;  // vLLM: model_memory_usage
  m.budget.activation_peak = p.peak_allocated_increase;
  const Bytes non_torch = total - dev.free_bytes() - r.memory.allocator->reserved_bytes();
  m.budget.non_torch_increase = non_torch > in.non_torch_at_start ? non_torch - in.non_torch_at_start : 0;
  m.fragmentation = p.fragmentation;
  return m;
}

std::int64_t tokens_of(std::int64_t kv_bytes, const engine::KvSizingInputs& in) {
  return in.tokens_in(kv_bytes);
}

Bytes fragmentation_buffer_bytes(Bytes fragmentation, double k, Bytes floor) {
  const auto scaled = static_cast<Bytes>(std::ceil(static_cast<double>(fragmentation) * k));
  return std::max(floor, scaled);
}

}  // namespace headroom::policy
