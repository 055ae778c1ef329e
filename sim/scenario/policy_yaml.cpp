#include "sim/scenario/policy_yaml.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/core/did_you_mean.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/yaml_load.hpp"
#include "sim/policy/policy_parameters.hpp"

namespace headroom::scenario {

namespace {

std::vector<std::string> kind_list() {
  std::vector<std::string> v;
  for (std::string_view n : policy::policy_kind_names()) v.emplace_back(n);
  return v;
}

policy::PolicyKind kind_of(const YamlSection& parent, const YAML::Node& at, std::string_view key) {
  const std::string text = parent.scalar(key, at);
  if (auto k = policy::parse_policy_kind(text)) return *k;
  parent.fail(at, key,
              fmt::format("unknown policy '{}'{}; expected one of {}", text, did_you_mean_suffix(text, kind_list()),
                          fmt::join(policy::policy_kind_names(), ", ")));
}

template <class Field>
void assign_text(policy::PolicySpec& spec, Field field, std::string value) {
  if constexpr (std::is_same_v<Field, std::string policy::PolicySpec::*>) spec.*field = std::move(value);
  else throw std::logic_error("a text policy parameter on a field that is not text");
}

template <class Field>
void assign_integer(policy::PolicySpec& spec, Field field, std::int64_t value) {
  using V = std::remove_cvref_t<decltype(spec.*field)>;
  if constexpr (std::is_same_v<V, int> || std::is_same_v<V, std::int64_t>) spec.*field = static_cast<V>(value);
  else throw std::logic_error("an integer policy parameter on a field that is not an integer");
}

// The parameters each kind reads, `label` included (policy_parameters.hpp).
std::vector<std::string> parameters_of(policy::PolicyKind kind) {
  std::vector<std::string> v;
  for (const policy::PolicyParameterUse& u : policy::policy_table(kind)) v.emplace_back(u.parameter->name);
  return v;
}

double fraction_param(const YamlSection& p, std::string_view key, bool open_at_one) {
  YAML::Node v = p.required(key);
  double d = p.number(key, v, false);
  if (open_at_one ? d >= 1.0 : d > 1.0)
    p.fail(v, key, fmt::format("expected a fraction in (0, 1{}, got '{}'", open_at_one ? ")" : "]", p.scalar(key, v)));
  return d;
}

// One parameter as its type reads it.
void read_parameter(const YamlSection& p, const policy::PolicyParameter& param, policy::PolicySpec& spec) {
  using T = policy::ParameterType;
  const std::string_view key = param.name;
  switch (param.type) {
    case T::text: std::visit([&](auto field) { assign_text(spec, field, p.text(key)); }, param.field); return;
    case T::boolean: p.optional_bool(key, spec.*std::get<bool policy::PolicySpec::*>(param.field)); return;
    case T::fraction:
      policy::set_parameter_number(spec, param, fraction_param(p, key, param.range && param.range->hi_open));
      return;
    case T::number:
      policy::set_parameter_number(spec, param, p.number(key, p.value(key), !(param.range && param.range->lo_open)));
      return;
    case T::bytes: spec.*std::get<Bytes policy::PolicySpec::*>(param.field) = p.bytes(key, true); return;
    case T::integer: {
      const auto lo = static_cast<std::int64_t>(param.range->lo);
      const std::int64_t hi = std::isinf(param.range->hi) ? INT64_MAX : static_cast<std::int64_t>(param.range->hi);
      std::visit([&](auto field) { assign_integer(spec, field, p.integer(key, p.value(key), lo, hi)); }, param.field);
      return;
    }
  }
}

void read_parameters(const YamlSection& p, policy::PolicySpec& spec) {
  p.check_keys(parameters_of(spec.kind));
  for (const policy::PolicyParameterUse& u : policy::policy_table(spec.kind))
    if (p.present(u.parameter->name)) read_parameter(p, *u.parameter, spec);
}

policy::PolicySpec read_entry(const YamlSection& parent, const YAML::Node& entry, const std::string& key) {
  policy::PolicySpec spec;
  // yaml-cpp's Node assignment writes through a bound node, so every node here is bound once.
  if (entry.IsMap() && entry.size() != 1)
    parent.fail(entry, key, "expected one policy per entry: a name, or a one-key mapping such as "
                            "'fragmentation_buffer: {k: 2}'");
  if (!entry.IsMap() && !entry.IsScalar())
    parent.fail(entry, key, "expected a policy name or a one-key mapping such as 'fragmentation_buffer: {k: 2}'");
  const YAML::Node name = entry.IsMap() ? entry.begin()->first : entry;
  const YAML::Node params = entry.IsMap() ? entry.begin()->second : YAML::Node();
  spec.kind = kind_of(parent, name, key);
  const std::string path = fmt::format("{}.{}", key, policy::policy_kind_name(spec.kind));
  if (params && params.IsScalar() && spec.kind == policy::PolicyKind::allocator) {
    spec.alloc_conf = params.Scalar();
  } else if (params && !params.IsNull()) {
    if (!params.IsMap()) parent.fail(params, path, "expected a mapping of the policy's parameters");
    read_parameters(YamlSection(params, parent.file(), parent.key_path(path)), spec);
  }
  if (spec.kind == policy::PolicyKind::allocator) {
    if (spec.alloc_conf.empty())
      parent.fail(entry, key, "the allocator policy needs a configuration, e.g. 'allocator: \"expandable_segments:True\"'");
    try {
      policy::make_policy(spec);
    } catch (const InputError& e) {
      parent.fail(entry, key, e.what());
    }
  }
  return spec;
}

}  // namespace

std::vector<policy::PolicySpec> read_policies(const YamlSection& parent, std::string_view key) {
  YAML::Node list = parent.required(key);
  if (!list.IsSequence() || list.size() == 0)
    parent.fail(list, key, "expected a non-empty list of policies, e.g. [engine, profiled, {fragmentation_buffer: {k: 2}}]");
  std::vector<policy::PolicySpec> out;
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(read_entry(parent, list[i], fmt::format("{}[{}]", key, i)));
  return out;
}

std::vector<policy::PolicySpec> load_policies(const std::filesystem::path& path) {
  const std::string text = read_text_file(path, "policy list");
  const std::string file = path.string();
  const YAML::Node root = load_yaml(text, file);
  if (root.IsSequence()) {
    YAML::Node wrapper;
    wrapper["compare"] = root;
    YamlSection top(wrapper, file, "");
    return read_policies(top, "compare");
  }
  if (!root.IsMap()) throw InputError(file + ": expected a list of policies or a mapping with a 'compare' list");
  YamlSection top(root, file, "");
  top.check_keys({"compare"});
  return read_policies(top, "compare");
}

void emit_policy(YAML::Emitter& e, const policy::PolicySpec& spec) {
  e << YAML::BeginMap << YAML::Key << std::string(policy::policy_kind_name(spec.kind)) << YAML::Value << YAML::BeginMap;
  for (const policy::PolicyParameterUse& u : policy::policy_table(spec.kind)) {
    const policy::PolicyParameter& p = *u.parameter;
    if (!policy::parameter_set(spec, p)) continue;  // an unset label or fraction: the default
    e << YAML::Key << std::string(p.name) << YAML::Value;
    std::visit(
        [&](auto field) {
          if constexpr (std::is_same_v<decltype(field), std::optional<double> policy::PolicySpec::*>) e << *(spec.*field);
          else e << spec.*field;
        },
        p.field);
  }
  e << YAML::EndMap << YAML::EndMap;
}

std::vector<policy::PolicySpec> default_policies() {
  using K = policy::PolicyKind;
  std::vector<policy::PolicySpec> v;
  for (K k : {K::engine, K::static_fraction, K::profiled, K::fragmentation_buffer, K::auto_profile, K::workspace_aware,
              K::workspace_cap, K::shared_decode_buffer, K::release_on_oom}) {
    policy::PolicySpec s;
    s.kind = k;
    v.push_back(s);
  }
  policy::PolicySpec expandable;
  expandable.kind = K::allocator;
  expandable.alloc_conf = "expandable_segments:True";
  v.push_back(expandable);
  return v;
}

}  // namespace headroom::scenario
