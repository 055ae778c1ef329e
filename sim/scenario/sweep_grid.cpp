#include "sim/scenario/sweep_grid.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/content_hash.hpp"
#include "sim/core/did_you_mean.hpp"
#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/yaml_load.hpp"
#include "sim/core/yaml_section.hpp"
#include "sim/model/model_source.hpp"
#include "sim/scenario/policy_yaml.hpp"
#include "sim/scenario/simulation.hpp"
#include "sim/scenario/tune.hpp"
#include "sim/scenario/workload_yaml.hpp"

namespace headroom::scenario {

namespace {

const std::vector<std::string> kStructuralAxes = {"gpu", "model", "trace", "seed", "allocator", "policy"};

struct Axis {
  std::string name;
  std::vector<YAML::Node> values;
  std::vector<std::string> texts;            // each value as written (flow YAML for a mapping)
  std::vector<policy::PolicySpec> policies;  // the policy axis, read as a `compare:` list
  bool knob = false;
};

std::string read_text(const std::filesystem::path& path) { return read_text_file(path, "sweep grid"); }

std::string text_of(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

// Applies one axis value to a point's scenario; InputError on a value that does not fit.
void apply(Scenario& sc, const Axis& axis, std::size_t v, const YamlSection& axes,
           const std::filesystem::path& folder) {
  const YAML::Node& node = axis.values[v];
  const std::string& text = axis.texts[v];
  if (axis.knob) {
    set_knob(sc, axis.name, axes.number(axis.name, node, false));
    sc.engine_knob_place[axis.name] = fmt::format("{}: key '{}'", axes.where(node), axes.key_path(axis.name));
  } else if (axis.name == "policy") {
    sc.policy = axis.policies[v];
  } else if (axis.name == "gpu") {
    std::string profile = axes.scalar(axis.name, node);
    if (profile.find('/') != std::string::npos || profile.ends_with(".yaml"))
      profile = resolve_data_path(profile, folder);
    sc.gpu_name = text;
    sc.gpu_file = gpu_profile_file(profile);
    sc.gpu = device::load_gpu_profile(profile);
  } else if (axis.name == "model") {
    std::string path = axes.scalar(axis.name, node);
    if (path.find('/') != std::string::npos && std::filesystem::exists(resolve_data_path(path, folder)))
      path = resolve_data_path(path, folder);
    sc.model_name = text;
    sc.model_file = model_config_file(path);
    sc.model = model::load_model(path);
  } else if (axis.name == "trace") {
    // A path, or the mapping a scenario's `workload.trace` takes ({path, sort, ...}); the base's
    // transforms and seed stay.
    YAML::Node wrapper;
    if (node.IsScalar()) wrapper["trace"]["path"] = node;
    else wrapper["trace"] = node;
    workload::WorkloadSpec w = read_workload(YamlSection(wrapper, axes.file(), "axes"), folder);
    std::error_code ec;
    refuse_special_file(w.trace->path, "trace");
    if (!std::filesystem::is_regular_file(w.trace->path, ec))
      axes.fail(node, axis.name, fmt::format("no such trace file '{}'", w.trace->path));
    sc.workload.trace = w.trace;
    sc.workload.synthetic.reset();
  } else if (axis.name == "seed") {
    const auto seed = static_cast<std::uint64_t>(axes.integer(axis.name, node, 0, INT64_MAX));
    sc.seed = seed;
    sc.workload.seed = seed;
  } else if (axis.name == "allocator") {
    sc.allocator = alloc::parse_alloc_conf(axes.scalar(axis.name, node), "PYTORCH_CUDA_ALLOC_CONF");
  }
}

}  // namespace

std::vector<std::string> sweep_axis_names() { return kStructuralAxes; }

SweepGrid load_sweep_grid(const std::filesystem::path& path) {
  SweepGrid grid;
  grid.file = path.string();
  const std::string text = read_text(path);
  const YAML::Node root = load_yaml(text, grid.file);
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a mapping with 'base' and 'axes'", grid.file));
  const std::filesystem::path folder = path.parent_path();
  YamlSection top(root, grid.file, "");
  top.check_keys({"name", "base", "axes"});
  grid.name = top.present("name") ? top.text("name") : path.stem().string();
  if (top.present("name")) grid.name_at = fmt::format("{}: key 'name'", top.where(top.value("name")));

  // The base scenario: a file (relative to the grid's folder) or an inline mapping.
  YAML::Node base_node = top.required("base");
  Scenario base;
  std::string base_text;
  if (base_node.IsScalar()) {
    const std::filesystem::path base_path = resolve_data_path(base_node.Scalar(), folder);
    std::error_code ec;
    try {
      refuse_special_file(base_path, "scenario");
    } catch (const InputError& e) {
      top.fail(base_node, "base", e.what());
    }
    if (!std::filesystem::is_regular_file(base_path, ec))
      top.fail(base_node, "base",
               std::filesystem::is_directory(base_path, ec)
                   ? fmt::format("'{}' is a folder; expected a scenario file", base_path.string())
                   : fmt::format("no such scenario file '{}'", base_path.string()));
    base_text = read_text(base_path);
    base = load_scenario(base_path);
  } else if (base_node.IsMap()) {
    base_text = YAML::Dump(base_node);
    base = parse_scenario(base_node, grid.file, folder, "base");
  } else {
    top.fail(base_node, "base", "expected a scenario file's path or a scenario mapping");
  }

  // Axes in the order written; the first varies slowest.
  YAML::Node axes_node = top.required("axes");
  if (!axes_node.IsMap() || axes_node.size() == 0)
    top.fail(axes_node, "axes", "expected a mapping of axis names to lists of values");
  YamlSection axes(axes_node, grid.file, "axes");
  std::vector<std::string> allowed = kStructuralAxes;
  for (const std::string& k : knob_names()) allowed.push_back(k);
  axes.check_keys(allowed);
  std::vector<Axis> list;
  for (const auto& kv : axes_node) {
    Axis a;
    a.name = kv.first.Scalar();
    const YAML::Node& values = kv.second;
    if (!values.IsSequence() || values.size() == 0) axes.fail(values, a.name, "expected a non-empty list of values");
    a.knob = std::find(kStructuralAxes.begin(), kStructuralAxes.end(), a.name) == kStructuralAxes.end();
    std::set<std::string> seen;
    for (const YAML::Node& v : values) {
      a.values.push_back(v);
      a.texts.push_back(text_of(v));
      if (!seen.insert(a.texts.back()).second)
        axes.fail(v, a.name, fmt::format("value '{}' appears twice", a.texts.back()));
      if (a.name != "policy" && a.name != "trace" && !v.IsScalar())
        axes.fail(v, a.name, "expected a single value");
    }
    if (a.name == "policy") {
      YAML::Node wrapper;
      wrapper["policy"] = values;
      a.policies = read_policies(YamlSection(wrapper, grid.file, "axes"), "policy");
      for (const policy::PolicySpec& p : a.policies) policy::make_policy(p);  // bad parameters fail now
    }
    grid.axes.push_back(a.name);
    list.push_back(std::move(a));
  }
  // Structural axes first (a knob `policy.k` applies to the point's policy), then the knobs.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (!list[i].knob) order.push_back(i);
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].knob) order.push_back(i);

  std::size_t total = 1;
  for (const Axis& a : list) {
    if (total > 1'000'000 / a.values.size())
      top.fail(axes_node, "axes", "the grid has more than 1,000,000 points");
    total *= a.values.size();
  }
  std::set<std::string> ids;
  std::map<std::string, std::uint64_t> file_hashes;
  grid.points.reserve(total);
  std::vector<std::size_t> at(list.size(), 0);  // mixed-radix counter, last axis fastest
  for (std::size_t index = 0; index < total; ++index) {
    SweepPoint p;
    p.index = index;
    p.scenario = base;
    std::string key = base_text, where;
    for (std::size_t i = 0; i < list.size(); ++i) {
      p.coordinates.emplace_back(list[i].name, list[i].texts[at[i]]);
      key += fmt::format("\n{}={}", list[i].name, list[i].texts[at[i]]);
      where += fmt::format("{}{}={}", i ? ", " : "", list[i].name, list[i].texts[at[i]]);
    }
    for (std::size_t i : order) {
      const Axis& a = list[i];
      const YAML::Node& v = a.values[at[i]];
      try {
        apply(p.scenario, a, at[i], axes, folder);
      } catch (const InputError& e) {
        const std::string what = e.what();
        if (what.rfind(grid.file + ":", 0) == 0) throw;  // already names its place in the grid
        throw InputError(fmt::format("{}: key 'axes.{}': value '{}' at point {} ({}): {}", axes.where(v), a.name,
                                     a.texts[at[i]], index, where, what));
      }
    }
    try {
      check_engine(p.scenario);  // the engine's own checks, as for any scenario, at each point
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: point {} ({}): {}", grid.file, index, where, e.what()));
    }
    p.id = fmt::format("{:016x}", fnv1a64(key));
    // The bytes of every file the point reads, hashed once per file however many points share it.
    std::string inputs;
    for (const auto& [file, what] : input_files(p.scenario)) {
      auto [it, fresh] = file_hashes.try_emplace(file.string(), 0);
      if (fresh) it->second = fnv1a64_file(file, what);
      inputs += fmt::format("{} {:016x}\n", what, it->second);
    }
    p.inputs = fmt::format("{:016x}", fnv1a64(inputs));
    if (!ids.insert(p.id).second)
      throw std::logic_error(fmt::format("{}: two grid points share the id {}", grid.file, p.id));
    grid.points.push_back(std::move(p));
    for (std::size_t i = list.size(); i-- > 0;) {
      if (++at[i] < list[i].values.size()) break;
      at[i] = 0;
    }
  }
  return grid;
}

}  // namespace headroom::scenario
