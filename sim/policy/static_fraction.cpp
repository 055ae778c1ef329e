// static_fraction: a fixed share of the memory goes to weights and KV, nothing measured (SGLang
// mem_fraction_static §2.2, LightLLM mem_fraction §3, vLLM gpu_memory_utilization without its
// profile run §1.1).
#include <fmt/format.h>

#include "sim/engine/engine_registry.hpp"
#include "sim/policy/kv_budget.hpp"
#include "sim/policy/policies.hpp"

namespace headroom::policy {

namespace {

class StaticFraction final : public DirectivePolicy {
 public:
  using DirectivePolicy::DirectivePolicy;

 protected:
  void direct(engine::StartupDirectives& directives, engine::EngineConfig& config, engine::Deployment&,
              PolicyStart& out) const override {
    directives.kv_sizer = [this, &out](engine::KvSizingInputs& in) -> engine::KvSizing {
      const double f = spec_.fraction.value_or(engine_fraction(in.startup.config));
      const std::int64_t tokens = static_fraction_tokens(in.startup.engine, in, f);
      out.kv_budget = static_cast<Bytes>(tokens) * in.kv_bytes_per_token;
      // SGLang's fraction is of the memory free before the weights (§2.2); the others' of the device.
      const bool of_free = engine::engine_traits(in.startup.engine).fraction_of_free_memory;
      out.device_budget = static_cast<Bytes>(
          f * static_cast<double>(of_free ? in.free_before_weights : in.deployment.total()));
      out.device_budget_rule =
          fmt::format("static_fraction: fraction {:g} × {}", f, of_free ? "free memory at start" : "capacity");
      out.notes.push_back(fmt::format("static fraction {}: {} KV tokens", f, tokens));
      return tokens;
    };
    (void)config;
  }
};

}  // namespace

std::unique_ptr<Policy> make_static_fraction(const PolicySpec& spec) { return std::make_unique<StaticFraction>(spec); }

}  // namespace headroom::policy
