#include "sim/scenario/scenario.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/core/output_name.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/yaml_load.hpp"
#include "sim/core/yaml_section.hpp"
#include "sim/model/model_source.hpp"
#include "sim/scenario/engine_yaml.hpp"
#include "sim/scenario/parallel_yaml.hpp"
#include "sim/scenario/policy_yaml.hpp"
#include "sim/scenario/simulation.hpp"
#include "sim/scenario/workload_yaml.hpp"

namespace headroom::scenario {

InputError located(const Scenario& s, const engine::EngineConfigError& e) {
  auto it = s.engine_knob_place.find(e.key());
  if (it != s.engine_knob_place.end()) return InputError(fmt::format("{}: {}", it->second, e.what()));
  return InputError(
      fmt::format("{}: key '{}.{}': {}", s.engine_where.empty() ? s.file : s.engine_where, s.engine_path, e.key(), e.what()));
}

// Run when the scenario is read, so that these errors name the file's line before any start-up.
void check_engine(const Scenario& s, const std::string& tp_place) {
  try {
    const engine::Deployment d = deployment(s);  // place_rank checks the parallel sizes
    std::visit([&](auto c) { engine::resolve(c, d); }, s.engine);
  } catch (const engine::EngineConfigError& e) {
    throw located(s, e);
  } catch (const InputError& e) {  // the TP size does not fit the model
    if (tp_place.empty()) throw;
    throw InputError(fmt::format("{}: {}", tp_place, e.what()));
  }
}

Scenario parse_scenario(const std::string& yaml, const std::string& file, const std::filesystem::path& folder) {
  const YAML::Node root = load_yaml(yaml, file);
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a mapping of keys at the top level", file));
  return parse_scenario(root, file, folder, "");
}

Scenario parse_scenario(const YAML::Node& root, const std::string& file, const std::filesystem::path& folder,
                        const std::string& path) {
  YamlSection top(root, file, path);
  if (!root.IsMap()) top.fail(root, "", "expected a scenario: a mapping of keys");
  top.check_keys({"name", "seed", "gpu", "model", "parallel", "engine", "allocator", "workload", "on_oom", "slo",
                  "policy", "compare"});
  Scenario s;
  s.file = file;
  s.name = top.present("name") ? top.text("name") : std::filesystem::path(file).stem().string();
  if (top.present("name")) s.name_at = fmt::format("{}: key '{}'", top.where(top.value("name")), top.key_path("name"));
  if (top.present("seed")) s.seed = static_cast<std::uint64_t>(top.integer("seed", top.value("seed"), 0, INT64_MAX));

  YamlSection gpu = top.child("gpu");
  gpu.check_keys({"profile", "visible", "other_processes", "graph_exec_bytes_per_layer"});
  s.gpu_name = gpu.text("profile");
  std::string profile = s.gpu_name;
  if (profile.find('/') != std::string::npos || profile.ends_with(".yaml")) {
    profile = resolve_data_path(profile, folder);
    require_data_file(gpu, "profile", s.gpu_name, profile);
  }
  s.gpu_file = gpu_profile_file(profile);
  try {
    s.gpu = device::load_gpu_profile(profile);
  } catch (const InputError& e) {  // name the scenario's place too
    throw InputError(fmt::format("{}: key 'gpu.profile': {}", gpu.where(gpu.value("profile")), e.what()));
  }
  if (gpu.present("visible")) {
    s.visible = gpu.bytes("visible");
    // A MIG slice or a capped driver shows less than the device holds, never more.
    if (*s.visible > s.gpu.capacity_bytes)
      gpu.fail(gpu.value("visible"), "visible",
               fmt::format("expected at most the profile's capacity ({}, {} B), got {} B", format_bytes(s.gpu.capacity_bytes),
                           s.gpu.capacity_bytes, *s.visible));
  }
  if (gpu.present("other_processes")) s.other_processes = gpu.bytes("other_processes", true);
  if (gpu.present("graph_exec_bytes_per_layer"))
    s.graph_exec_bytes_per_layer = gpu.bytes("graph_exec_bytes_per_layer", true);

  YamlSection m = top.child("model");
  m.check_keys({"name", "tp"});
  s.model_name = m.text("name");
  std::string model_path = s.model_name;
  const std::string resolved_model = resolve_data_path(model_path, folder);
  require_data_file(m, "name", model_path, resolved_model);
  if (model_path.find('/') != std::string::npos && std::filesystem::exists(resolved_model)) model_path = resolved_model;
  s.model_file = model_config_file(model_path);
  try {
    s.model = model::load_model(model_path);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: key 'model.name': {}", m.where(m.value("name")), e.what()));
  }
  if (m.present("tp")) s.tp = static_cast<int>(m.integer("tp", m.value("tp"), 1, 1024));

  const YamlSection engine_section = top.child("engine");
  s.engine = read_engine(engine_section);
  s.engine_path = top.key_path("engine");
  s.engine_where = engine_section.where(engine_section.node());
  for (const auto& kv : engine_section.node())
    s.engine_knob_place[kv.first.Scalar()] =
        fmt::format("{}: key '{}'", engine_section.where(kv.second), engine_section.key_path(kv.first.Scalar()));
  if (top.present("parallel")) s.parallel = read_parallel(top.child("parallel"), s.engine_knob_place);
  if (top.present("allocator")) {
    YAML::Node v = top.value("allocator");
    s.allocator = alloc::parse_alloc_conf(top.scalar("allocator", v), fmt::format("{}: key 'allocator'", top.where(v)));
  }
  s.workload = read_workload(top.child("workload"), folder);
  if (!top.child("workload").present("seed")) s.workload.seed = s.seed;
  if (top.present("on_oom"))
    s.on_oom = top.choice("on_oom", {"stop", "continue"}) == "continue" ? engine::OnOom::continue_running
                                                                         : engine::OnOom::stop;
  if (top.present("slo")) {
    const YamlSection slo = top.child("slo");
    slo.check_keys(report::slo_keys());
    for (const std::string& key : report::slo_keys())
      if (slo.present(key)) report::slo_limit(s.slo, key) = slo.number(key, slo.value(key), false);
  }
  if (top.present("policy")) {
    // One entry in the compare format: read it as a one-element list.
    YAML::Node wrapper;
    wrapper["policy"].push_back(top.value("policy"));
    s.policy = read_policies(YamlSection(wrapper, top.file(), ""), "policy").front();
  }
  if (top.present("compare")) s.compare = read_policies(top, "compare");
  check_engine(s, m.present("tp") ? fmt::format("{}: key '{}'", m.where(m.value("tp")), m.key_path("tp")) : "");
  return s;
}

std::string gpu_profile_file(const std::string& resolved) {
  std::error_code ec;
  return std::filesystem::is_regular_file(resolved, ec) ? resolved : std::string();  // as load_gpu_profile decides
}

std::string model_config_file(const std::string& resolved) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(resolved, ec)) return "";  // a catalogue name (model::load_model)
  return fs::is_directory(resolved, ec) ? (fs::path(resolved) / "config.json").string() : resolved;
}

std::filesystem::path default_output_folder(const std::string& name, const std::string& name_at,
                                            const std::string& file) {
  if (const std::string problem = output_name_problem(name); !problem.empty()) {
    const std::string what = fmt::format("expected a plain name for the output folder out/<name> (no '/', no '..', "
                                         "not empty), got '{}': {}; or give the output folder with -o",
                                         printable(name), problem);
    if (!name_at.empty()) throw InputError(name_at + ": " + what);
    throw InputError(fmt::format("{}: the name comes from the file's name; {}", file, what));
  }
  return std::filesystem::path("out") / name;
}

std::vector<std::pair<std::filesystem::path, std::string>> input_files(const Scenario& s) {
  std::vector<std::pair<std::filesystem::path, std::string>> files;
  if (!s.gpu_file.empty()) files.emplace_back(s.gpu_file, "GPU profile");
  if (!s.model_file.empty()) files.emplace_back(s.model_file, "model config");
  if (s.workload.trace) files.emplace_back(s.workload.trace->path, "trace");
  if (s.workload.synthetic && s.workload.synthetic->lengths_file)
    files.emplace_back(s.workload.synthetic->lengths_file->path, "lengths file");
  return files;
}

Scenario load_scenario(const std::filesystem::path& path) {
  return parse_scenario(read_text_file(path, "scenario"), path.string(), path.parent_path());
}

}  // namespace headroom::scenario
