// profiled: vLLM's accounting (§1.1) for any engine: a profile forward at the engine's largest
// prefill over its largest batch (plus the worst-case sampler), then KV = total × fraction −
// weights − activation peak − non-torch growth, optionally minus PR #30515's CUDA-graph estimate and
// a fixed margin (vLLM logs a suggestion with 150 MiB). fragmentation_buffer subtracts as well
// max(floor, k × (peak reserved − peak allocated)) seen during the profile run.
#include <cmath>

#include <fmt/format.h>

#include "sim/policy/kv_budget.hpp"
#include "sim/policy/policies.hpp"

namespace headroom::policy {

namespace {

class Profiled final : public DirectivePolicy {
 public:
  using DirectivePolicy::DirectivePolicy;

 protected:
  void direct(engine::StartupDirectives& directives, engine::EngineConfig&, engine::Deployment&,
              PolicyStart& out) const override {
    directives.kv_sizer = [this, &out](engine::KvSizingInputs& in) -> engine::KvSizing {
      engine::StartupResult& r = in.startup;
      const double f = spec_.fraction.value_or(engine_fraction(r.config));
      auto measured = measure_profiled(in, f);
      if (const auto* why = std::get_if<std::string>(&measured)) return describe(spec_) + ": " + *why;
      const ProfiledMeasurement& m = std::get<ProfiledMeasurement>(measured);
      ProfiledBudget b = m.budget;
      out.device_budget = b.requested;
      out.device_budget_rule = fmt::format("{}: fraction {:g} × capacity", policy_kind_name(spec_.kind), f);
      b.margin = spec_.margin;
      if (spec_.cudagraph_estimate) {
        std::optional<Bytes> g = engine::estimate_cudagraph_memory(r, in.deployment, in.graph_sizes);
        if (!g) return fmt::format("{}: the CUDA-graph estimate ran out of memory", describe(spec_));
        b.graph_estimate = *g;
      }
      if (spec_.kind == PolicyKind::fragmentation_buffer)
        b.buffer = fragmentation_buffer_bytes(m.fragmentation, spec_.k, spec_.floor);
      out.kv_budget = b.kv_bytes() > 0 ? static_cast<Bytes>(b.kv_bytes()) : 0;
      out.notes.push_back(fmt::format(
          "requested {} − weights {} − activation peak {} − non-torch {}{}{}{} = KV {}", format_bytes(b.requested),
          format_bytes(b.weights), format_bytes(b.activation_peak), format_bytes(b.non_torch_increase),
          b.graph_estimate ? " − graph estimate " + format_bytes(b.graph_estimate) : "",
          b.margin ? " − margin " + format_bytes(b.margin) : "",
          spec_.kind == PolicyKind::fragmentation_buffer
              ? fmt::format(" − buffer {} (fragmentation while profiling {})", format_bytes(b.buffer),
                            format_bytes(m.fragmentation))
              : "",
          b.kv_bytes() > 0 ? format_bytes(static_cast<Bytes>(b.kv_bytes())) : fmt::format("{} B", b.kv_bytes())));
      if (b.kv_bytes() <= 0)
        return fmt::format("{}: no memory left for the KV cache ({} B); lower the activation peak (smaller prefill "
                           "or batch) or raise the fraction",
                           describe(spec_), b.kv_bytes());
      return tokens_of(b.kv_bytes(), in);
    };
  }
};

}  // namespace

std::unique_ptr<Policy> make_profiled(const PolicySpec& spec) { return std::make_unique<Profiled>(spec); }

}  // namespace headroom::policy
