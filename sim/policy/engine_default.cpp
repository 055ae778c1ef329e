// engine: the engine's own start-up as configured; the baseline every other policy is compared with.
#include "sim/policy/policies.hpp"

namespace headroom::policy {

namespace {

class EngineDefault final : public DirectivePolicy {
 public:
  using DirectivePolicy::DirectivePolicy;

 protected:
  void direct(engine::StartupDirectives&, engine::EngineConfig&, engine::Deployment&, PolicyStart&) const override {}
};

}  // namespace

std::unique_ptr<Policy> make_engine_default(const PolicySpec& spec) { return std::make_unique<EngineDefault>(spec); }

}  // namespace headroom::policy
