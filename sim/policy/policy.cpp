#include "sim/policy/policy.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/startup.hpp"
#include "sim/policy/policies.hpp"

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

void check_fraction(std::optional<double> f, std::string_view what) {
  if (f && !(*f > 0 && *f <= 1))
    throw InputError(fmt::format("{}: fraction must be in (0, 1], got {}", what, *f));
}

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
  const std::string_view kind = policy_kind_name(s.kind);
  auto fraction = [&] { return s.fraction ? fmt::format("fraction={}", *s.fraction) : std::string("fraction=engine's"); };
  switch (s.kind) {
    case PolicyKind::engine:
    case PolicyKind::workspace_cap:
    case PolicyKind::shared_decode_buffer: return std::string(kind);
    case PolicyKind::static_fraction:
    case PolicyKind::workspace_aware: return fmt::format("{}({})", kind, fraction());
    case PolicyKind::profiled:
      return fmt::format("{}({}{}{})", kind, fraction(), s.margin ? ", margin=" + format_bytes(s.margin) : "",
                         s.cudagraph_estimate ? ", cudagraph_estimate" : "");
    case PolicyKind::fragmentation_buffer:
      return fmt::format("{}({}, k={}, floor={})", kind, fraction(), s.k, format_bytes(s.floor));
    case PolicyKind::auto_profile:
      return fmt::format("{}(mem_fraction={}, canary={}, shrink={}, max_retries={})", kind, s.mem_fraction,
                         format_bytes(s.canary), s.shrink, s.max_retries);
    case PolicyKind::release_on_oom: return fmt::format("{}(canary={})", kind, format_bytes(s.canary));
    case PolicyKind::allocator: return fmt::format("allocator({})", s.alloc_conf);
  }
  return std::string(kind);
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
  check_fraction(spec.fraction, what);
  if (spec.k < 0) throw InputError(fmt::format("{}: k must be at least 0, got {}", what, spec.k));
  if (!(spec.mem_fraction > 0 && spec.mem_fraction <= 1))
    throw InputError(fmt::format("{}: mem_fraction must be in (0, 1], got {}", what, spec.mem_fraction));
  if (!(spec.shrink > 0 && spec.shrink < 1))
    throw InputError(fmt::format("{}: shrink must be in (0, 1), got {}", what, spec.shrink));
  if (spec.max_retries < 0 || spec.max_retries > 100)
    throw InputError(fmt::format("{}: max_retries must be in [0, 100], got {}", what, spec.max_retries));
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
