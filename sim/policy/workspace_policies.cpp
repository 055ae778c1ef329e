// workspace_aware and workspace_cap: the two proposed fixes for an attention workspace that the
// KV arithmetic never sees (SGLang aiter, §2.5; vLLM FlashInfer's 256 MiB is not profiled either).
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/engine_registry.hpp"
#include "sim/policy/kv_budget.hpp"
#include "sim/policy/policies.hpp"
#include "sim/policy/workspace_aware.hpp"

namespace headroom::policy {

namespace {

// The bytes the engine's own arithmetic gives the KV cache, before any workspace (EngineTraits
// fraction_kv_bytes: SGLang without the aiter × 0.85 hack this policy replaces), or, where that
// arithmetic needs a profile run, vLLM's profiled accounting.
std::variant<std::int64_t, std::string> engine_kv_budget(engine::KvSizingInputs& in, double fraction) {
  if (auto bytes = engine::engine_traits(in.startup.engine).fraction_kv_bytes(in, fraction)) return *bytes;
  auto measured = measure_profiled(in, fraction);
  if (const auto* why = std::get_if<std::string>(&measured)) return *why;
  return std::get<ProfiledMeasurement>(measured).budget.kv_bytes();
}

class WorkspaceAware final : public DirectivePolicy {
 public:
  using DirectivePolicy::DirectivePolicy;

 protected:
  void direct(engine::StartupDirectives& directives, engine::EngineConfig&, engine::Deployment&,
              PolicyStart& out) const override {
    directives.kv_sizer = [this, &out](engine::KvSizingInputs& in) -> engine::KvSizing {
      const double f = spec_.fraction.value_or(engine_fraction(in.startup.config));
      auto budget = engine_kv_budget(in, f);
      if (const auto* why = std::get_if<std::string>(&budget)) return describe(spec_) + ": " + *why;
      const std::int64_t bytes = std::get<std::int64_t>(budget);
      out.kv_budget = bytes > 0 ? static_cast<Bytes>(bytes) : 0;
      std::int64_t tokens = 0;
      Bytes workspace = 0;
      if (in.clamped_workspace) {
        tokens = three_region_kv_tokens(bytes, in.kv_bytes_per_token, in.kv_block_tokens, *in.clamped_workspace);
        workspace = in.clamped_workspace->bytes(tokens);
      } else {
        workspace = in.workspace_bytes(0);
        tokens = tokens_of(bytes - static_cast<std::int64_t>(workspace), in);
      }
      out.notes.push_back(fmt::format("KV and workspace share {}: {} KV tokens, workspace {}",
                                      format_bytes(out.kv_budget.value_or(0)), tokens, format_bytes(workspace)));
      if (tokens <= 0)
        return fmt::format("{}: the workspace ({}) leaves no memory for the KV cache in a budget of {}; lower the "
                           "context length or the request pool, or free memory on the GPU",
                           describe(spec_), format_bytes(workspace), format_bytes(out.kv_budget.value_or(0)));
      return tokens;
    };
  }
};

// The engine's own arithmetic, with the workspace's partitions bounded by the KV capacity: no
// request can hold more tokens than the pool has.
class WorkspaceCap final : public DirectivePolicy {
 public:
  using DirectivePolicy::DirectivePolicy;

 protected:
  void direct(engine::StartupDirectives& directives, engine::EngineConfig&, engine::Deployment&,
              PolicyStart&) const override {
    directives.cap_workspace_by_kv = true;
  }
};

}  // namespace

std::unique_ptr<Policy> make_workspace_aware(const PolicySpec& spec) { return std::make_unique<WorkspaceAware>(spec); }
std::unique_ptr<Policy> make_workspace_cap(const PolicySpec& spec) { return std::make_unique<WorkspaceCap>(spec); }

}  // namespace headroom::policy
