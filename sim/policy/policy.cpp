#include "sim/policy/policy.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/error.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/startup.hpp"
#include "sim/policy/policies.hpp"
#include "sim/policy/policy_parameters.hpp"

namespace headroom::policy {

namespace {

constexpr std::array<std::pair<PolicyKind, std::string_view>, 10> kNames{{
    {PolicyKind::engine, "engine"},
    {PolicyKind::static_fraction, "static_fraction"},
    {PolicyKind::profiled, "profiled"},
    {PolicyKind::fragmentation_buffer, "fragmentation_buffer"},
    {PolicyKind::auto_profile, "auto_profile"},
    {PolicyKind::workspace_aware, "workspace_aware"},
    {PolicyKind::workspace_cap, "workspace_cap"},
    {PolicyKind::shared_decode_buffer, "shared_decode_buffer"},
    {PolicyKind::release_on_oom, "release_on_oom"},
    {PolicyKind::allocator, "allocator"},
}};

}  // namespace

std::string_view policy_kind_name(PolicyKind kind) {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "?";
}

std::optional<PolicyKind> parse_policy_kind(std::string_view text) {
  for (const auto& [k, name] : kNames)
    if (name == text) return k;
  return std::nullopt;
}

const std::vector<std::string_view>& policy_kind_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const auto& entry : kNames) v.push_back(entry.second);
    return v;
  }();
  return names;
}

std::string describe(const PolicySpec& s) {
  std::vector<std::string> shown;
  for (const PolicyParameterUse& u : policy_table(s.kind)) {
    const PolicyParameter& p = *u.parameter;
    switch (u.shown) {
      case Shown::always: shown.push_back(fmt::format("{}={}", p.name, parameter_text(s, p))); break;
      case Shown::when_nonzero:
        if (parameter_number(s, p) != 0) shown.push_back(fmt::format("{}={}", p.name, parameter_text(s, p)));
        break;
      case Shown::flag:
        if (parameter_number(s, p) != 0) shown.emplace_back(p.name);
        break;
      case Shown::bare: shown.push_back(parameter_text(s, p)); break;
      case Shown::hidden: break;
    }
  }
  const std::string_view kind = policy_kind_name(s.kind);
  if (shown.empty()) return std::string(kind);
  return fmt::format("{}({})", kind, fmt::join(shown, ", "));
}

double engine_fraction(const engine::EngineConfig& config) {
  return engine::engine_traits(config).fraction(config);
}

PolicyStart DirectivePolicy::start(const engine::Deployment& deployment, const engine::EngineConfig& config) const {
  PolicyStart out;
  engine::StartupDirectives directives;
  engine::EngineConfig c = config;
  engine::Deployment d = deployment;
  direct(directives, c, d, out);
  out.startup = engine::start_engine(d, c, directives);
  return out;
}

std::unique_ptr<Policy> make_policy(const PolicySpec& spec) {
  const std::string what = describe(spec);
  // Every parameter with a range, whichever policy reads it, in the catalogue's order.
  for (const PolicyParameter& p : policy_parameters()) {
    if (!p.range || !parameter_set(spec, p)) continue;
    const double v = parameter_number(spec, p);
    if (!p.range->contains(v)) throw InputError(fmt::format("{}: {} must be {}, got {}", what, p.name, p.range->text(), v));
  }
  switch (spec.kind) {
    case PolicyKind::engine: return make_engine_default(spec);
    case PolicyKind::static_fraction: return make_static_fraction(spec);
    case PolicyKind::profiled:
    case PolicyKind::fragmentation_buffer: return make_profiled(spec);
    case PolicyKind::auto_profile: return make_auto_profile(spec);
    case PolicyKind::workspace_aware: return make_workspace_aware(spec);
    case PolicyKind::workspace_cap: return make_workspace_cap(spec);
    case PolicyKind::shared_decode_buffer: return make_shared_decode_buffer(spec);
    case PolicyKind::release_on_oom: return make_release_on_oom(spec);
    case PolicyKind::allocator: return make_allocator_what_if(spec);
  }
  throw InputError("unknown policy kind");
}

}  // namespace headroom::policy
