#include "sim/policy/policy_parameters.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace headroom::policy {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Defaults: policy.hpp's PolicySpec (auto_profile's are LightLLM PR #1273's).
const std::vector<PolicyParameter>& catalogue() {
  static const std::vector<PolicyParameter> v = {
      {"label", ParameterType::text, "", std::nullopt, "the policy with its parameters",
       "the name shown in tables and files", &PolicySpec::label, ""},
      {"fraction", ParameterType::fraction, "", ParameterRange{0, 1, true, false}, "the engine's own knob",
       "share of the device", &PolicySpec::fraction, "policy.fraction"},
      {"margin", ParameterType::bytes, "bytes", std::nullopt, "0", "bytes kept back", &PolicySpec::margin,
       "policy.margin_mib"},
      {"cudagraph_estimate", ParameterType::boolean, "", std::nullopt, "false",
       "subtract vLLM PR #30515's graph estimate", &PolicySpec::cudagraph_estimate, ""},
      {"k", ParameterType::number, "", ParameterRange{0, kInf, false, true}, "2",
       "buffer = max(floor, k × fragmentation while profiling)", &PolicySpec::k, "policy.k"},
      {"floor", ParameterType::bytes, "bytes", std::nullopt, "150 MiB", "the least buffer", &PolicySpec::floor,
       "policy.floor_mib"},
      {"mem_fraction", ParameterType::fraction, "", ParameterRange{0, 1, true, false}, "0.95",
       "multiplier of the measured budget", &PolicySpec::mem_fraction, "policy.mem_fraction"},
      {"canary", ParameterType::bytes, "bytes", std::nullopt, "256 MiB", "bytes held after start-up",
       &PolicySpec::canary, "policy.canary_mib"},
      {"shrink", ParameterType::fraction, "", ParameterRange{0, 1, true, true}, "0.05",
       "the KV capacity lost per retry", &PolicySpec::shrink, ""},
      {"max_retries", ParameterType::integer, "", ParameterRange{0, 100, false, false}, "3",
       "retries after the first attempt", &PolicySpec::max_retries, ""},
      {"min_probe_tokens", ParameterType::integer, "tokens", ParameterRange{1, kInf, false, true}, "8192",
       "probe KV = max(this, prefill + graph batch)", &PolicySpec::min_probe_tokens, ""},
      {"conf", ParameterType::text, "", std::nullopt, "", "the PYTORCH_CUDA_ALLOC_CONF string", &PolicySpec::alloc_conf,
       ""},
  };
  return v;
}

const PolicyParameter& param(std::string_view name) {
  const PolicyParameter* p = find_policy_parameter(name);
  if (!p) throw std::logic_error(fmt::format("no policy parameter '{}'", name));
  return *p;
}

std::vector<PolicyParameterUse> uses(std::initializer_list<std::pair<std::string_view, Shown>> list) {
  std::vector<PolicyParameterUse> v{{&param("label"), Shown::hidden}};
  for (const auto& [name, shown] : list) v.push_back({&param(name), shown});
  return v;
}

}  // namespace

bool ParameterRange::contains(double v) const {
  return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
}

std::string ParameterRange::text() const {
  if (hi == kInf && !lo_open) return fmt::format("at least {}", lo);
  return fmt::format("in {}{}, {}{}", lo_open ? "(" : "[", lo, hi, hi_open ? ")" : "]");
}

const std::vector<PolicyParameter>& policy_parameters() { return catalogue(); }

const PolicyParameter* find_policy_parameter(std::string_view name) {
  for (const PolicyParameter& p : catalogue())
    if (p.name == name) return &p;
  return nullptr;
}

const std::vector<PolicyParameterUse>& policy_table(PolicyKind kind) {
  using S = Shown;
  static const std::vector<PolicyParameterUse> label_only = uses({});
  static const std::vector<PolicyParameterUse> fraction_only = uses({{"fraction", S::always}});
  static const std::vector<PolicyParameterUse> profiled =
      uses({{"fraction", S::always}, {"margin", S::when_nonzero}, {"cudagraph_estimate", S::flag}});
  static const std::vector<PolicyParameterUse> fragmentation_buffer =
      uses({{"fraction", S::always}, {"margin", S::hidden}, {"cudagraph_estimate", S::hidden}, {"k", S::always},
            {"floor", S::always}});
  static const std::vector<PolicyParameterUse> auto_profile =
      uses({{"mem_fraction", S::always}, {"canary", S::always}, {"shrink", S::always}, {"max_retries", S::always},
            {"min_probe_tokens", S::hidden}});
  static const std::vector<PolicyParameterUse> release_on_oom = uses({{"canary", S::always}});
  static const std::vector<PolicyParameterUse> allocator = uses({{"conf", S::bare}});
  switch (kind) {
    case PolicyKind::engine:
    case PolicyKind::workspace_cap:
    case PolicyKind::shared_decode_buffer: return label_only;
    case PolicyKind::static_fraction:
    case PolicyKind::workspace_aware: return fraction_only;
    case PolicyKind::profiled: return profiled;
    case PolicyKind::fragmentation_buffer: return fragmentation_buffer;
    case PolicyKind::auto_profile: return auto_profile;
    case PolicyKind::release_on_oom: return release_on_oom;
    case PolicyKind::allocator: return allocator;
  }
  return label_only;
}

bool policy_reads(PolicyKind kind, const PolicyParameter& parameter) {
  const std::vector<PolicyParameterUse>& t = policy_table(kind);
  return std::any_of(t.begin(), t.end(), [&](const PolicyParameterUse& u) { return u.parameter == &parameter; });
}

const std::vector<const PolicyParameter*>& tunable_policy_parameters() {
  static const std::vector<const PolicyParameter*> v = {&param("fraction"), &param("mem_fraction"), &param("k"),
                                                        &param("margin"),   &param("floor"),        &param("canary")};
  return v;
}

bool parameter_set(const PolicySpec& spec, const PolicyParameter& p) {
  if (const auto* f = std::get_if<std::optional<double> PolicySpec::*>(&p.field)) return (spec.*(*f)).has_value();
  if (const auto* f = std::get_if<std::string PolicySpec::*>(&p.field)) return !(spec.*(*f)).empty();
  return true;
}

double parameter_number(const PolicySpec& spec, const PolicyParameter& p) {
  return std::visit(
      [&](auto field) -> double {
        using T = std::remove_cvref_t<decltype(spec.*field)>;
        if constexpr (std::is_same_v<T, std::string>) {
          throw std::logic_error(fmt::format("policy parameter '{}' is text", p.name));
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          return (spec.*field).value_or(0.0);
        } else {
          return static_cast<double>(spec.*field);
        }
      },
      p.field);
}

std::string parameter_text(const PolicySpec& spec, const PolicyParameter& p) {
  return std::visit(
      [&](auto field) -> std::string {
        using T = std::remove_cvref_t<decltype(spec.*field)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return spec.*field;
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          return spec.*field ? fmt::format("{}", *(spec.*field)) : std::string("engine's");
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return format_bytes(spec.*field);
        } else if constexpr (std::is_same_v<T, bool>) {
          return spec.*field ? "true" : "false";
        } else {
          return fmt::format("{}", spec.*field);
        }
      },
      p.field);
}

void set_parameter_number(PolicySpec& spec, const PolicyParameter& p, double value) {
  std::visit(
      [&](auto field) {
        using T = std::remove_cvref_t<decltype(spec.*field)>;
        if constexpr (std::is_same_v<T, std::string>) {
          throw std::logic_error(fmt::format("policy parameter '{}' is text", p.name));
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          spec.*field = value;
        } else if constexpr (std::is_same_v<T, bool>) {
          spec.*field = value != 0;
        } else {
          spec.*field = static_cast<T>(value);
        }
      },
      p.field);
}

}  // namespace headroom::policy
