#include "sim/scenario/policy_yaml.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/core/did_you_mean.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/yaml_load.hpp"

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

// The parameters each kind reads, `label` included.
std::vector<std::string> parameters_of(policy::PolicyKind kind) {
  using K = policy::PolicyKind;
  switch (kind) {
    case K::engine:
    case K::workspace_cap:
    case K::shared_decode_buffer: return {"label"};
    case K::static_fraction:
    case K::workspace_aware: return {"label", "fraction"};
    case K::profiled: return {"label", "fraction", "margin", "cudagraph_estimate"};
    case K::fragmentation_buffer: return {"label", "fraction", "margin", "cudagraph_estimate", "k", "floor"};
    case K::auto_profile: return {"label", "mem_fraction", "canary", "shrink", "max_retries", "min_probe_tokens"};
    case K::release_on_oom: return {"label", "canary"};
    case K::allocator: return {"label", "conf"};
  }
  return {"label"};
}

double fraction_param(const YamlSection& p, std::string_view key, bool open_at_one) {
  YAML::Node v = p.required(key);
  double d = p.number(key, v, false);
  if (open_at_one ? d >= 1.0 : d > 1.0)
    p.fail(v, key, fmt::format("expected a fraction in (0, 1{}, got '{}'", open_at_one ? ")" : "]", p.scalar(key, v)));
  return d;
}

void read_parameters(const YamlSection& p, policy::PolicySpec& spec) {
  p.check_keys(parameters_of(spec.kind));
  if (p.present("label")) spec.label = p.text("label");
  if (p.present("fraction")) spec.fraction = fraction_param(p, "fraction", false);
  if (p.present("margin")) spec.margin = p.bytes("margin", true);
  p.optional_bool("cudagraph_estimate", spec.cudagraph_estimate);
  if (p.present("k")) spec.k = p.number("k", p.value("k"), true);
  if (p.present("floor")) spec.floor = p.bytes("floor", true);
  if (p.present("mem_fraction")) spec.mem_fraction = fraction_param(p, "mem_fraction", false);
  if (p.present("canary")) spec.canary = p.bytes("canary", true);
  if (p.present("shrink")) spec.shrink = fraction_param(p, "shrink", true);
  if (p.present("max_retries")) spec.max_retries = static_cast<int>(p.integer("max_retries", p.value("max_retries"), 0, 100));
  if (p.present("min_probe_tokens"))
    spec.min_probe_tokens = p.integer("min_probe_tokens", p.value("min_probe_tokens"), 1, INT64_MAX);
  if (p.present("conf")) spec.alloc_conf = p.text("conf");
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
  const std::vector<std::string> params = parameters_of(spec.kind);
  auto has = [&](const char* p) { return std::find(params.begin(), params.end(), p) != params.end(); };
  e << YAML::BeginMap << YAML::Key << std::string(policy::policy_kind_name(spec.kind)) << YAML::Value << YAML::BeginMap;
  if (!spec.label.empty()) e << YAML::Key << "label" << YAML::Value << spec.label;
  if (has("fraction") && spec.fraction) e << YAML::Key << "fraction" << YAML::Value << *spec.fraction;
  if (has("margin")) e << YAML::Key << "margin" << YAML::Value << spec.margin;
  if (has("cudagraph_estimate")) e << YAML::Key << "cudagraph_estimate" << YAML::Value << spec.cudagraph_estimate;
  if (has("k")) e << YAML::Key << "k" << YAML::Value << spec.k;
  if (has("floor")) e << YAML::Key << "floor" << YAML::Value << spec.floor;
  if (has("mem_fraction")) e << YAML::Key << "mem_fraction" << YAML::Value << spec.mem_fraction;
  if (has("canary")) e << YAML::Key << "canary" << YAML::Value << spec.canary;
  if (has("shrink")) e << YAML::Key << "shrink" << YAML::Value << spec.shrink;
  if (has("max_retries")) e << YAML::Key << "max_retries" << YAML::Value << spec.max_retries;
  if (has("min_probe_tokens")) e << YAML::Key << "min_probe_tokens" << YAML::Value << spec.min_probe_tokens;
  if (has("conf")) e << YAML::Key << "conf" << YAML::Value << spec.alloc_conf;
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
