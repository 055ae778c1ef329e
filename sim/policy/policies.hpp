#pragma once
// The policy objects, one file each; make_policy() picks one by kind.
#include <memory>

#include "sim/engine/startup.hpp"
#include "sim/policy/policy.hpp"

namespace headroom::policy {

std::unique_ptr<Policy> make_engine_default(const PolicySpec& spec);
std::unique_ptr<Policy> make_static_fraction(const PolicySpec& spec);
std::unique_ptr<Policy> make_profiled(const PolicySpec& spec);  // profiled and fragmentation_buffer
std::unique_ptr<Policy> make_auto_profile(const PolicySpec& spec);
std::unique_ptr<Policy> make_workspace_aware(const PolicySpec& spec);
std::unique_ptr<Policy> make_workspace_cap(const PolicySpec& spec);
std::unique_ptr<Policy> make_shared_decode_buffer(const PolicySpec& spec);
std::unique_ptr<Policy> make_release_on_oom(const PolicySpec& spec);
std::unique_ptr<Policy> make_allocator_what_if(const PolicySpec& spec);

// A policy whose whole decision is a KV sizer and start-up directives on the engine's own start-up.
class DirectivePolicy : public Policy {
 public:
  explicit DirectivePolicy(PolicySpec spec) : spec_(std::move(spec)) {}
  const PolicySpec& spec() const override { return spec_; }
  PolicyStart start(const engine::Deployment& deployment, const engine::EngineConfig& config) const override;

 protected:
  // Fills the directives (a sizer, a canary, ...) and may change the configuration; the sizer may
  // record its figures in `out` (captured by reference; it runs inside start()).
  virtual void direct(engine::StartupDirectives& directives, engine::EngineConfig& config,
                      engine::Deployment& deployment, PolicyStart& out) const = 0;
  PolicySpec spec_;
};

}  // namespace headroom::policy
