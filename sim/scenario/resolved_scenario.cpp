#include "sim/scenario/resolved_scenario.hpp"

#include "sim/scenario/policy_yaml.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "sim/allocator/alloc_config.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/yaml_load.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/scenario/parallel_yaml.hpp"
#include "sim/scenario/simulation.hpp"

namespace headroom::scenario {

namespace {

void emit_engine(YAML::Emitter& e, const engine::EngineConfig& config) {
  e << YAML::BeginMap;
  engine::engine_traits(config).write_knobs(e, config);
  e << YAML::EndMap;
}

// The workload section as written, with file paths replaced by the resolved absolute ones.
YAML::Node workload_node(const Scenario& s, const std::string& source_text) {
  std::error_code ec;
  const std::string text = !source_text.empty()                    ? source_text
                           : std::filesystem::exists(s.file, ec) ? read_text_file(s.file, "scenario")
                                                                 : std::string();
  YAML::Node w = YAML::Clone(load_yaml(text, s.file)["workload"]);
  auto absolute = [](const std::string& p) { return std::filesystem::absolute(p).lexically_normal().string(); };
  if (s.workload.trace) w["trace"]["path"] = absolute(s.workload.trace->path);
  if (s.workload.synthetic && s.workload.synthetic->lengths_file)
    w["synthetic"]["lengths_file"]["path"] = absolute(s.workload.synthetic->lengths_file->path);
  if (!w["seed"]) w["seed"] = s.workload.seed;
  return w;
}

}  // namespace

std::string resolved_scenario_yaml(const Scenario& s, const engine::EngineConfig& resolved_engine,
                                   const std::string& source_text) {
  YAML::Emitter e;
  e << YAML::Comment("as resolved by headroom: every default filled in");
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << s.name;
  e << YAML::Key << "seed" << YAML::Value << s.seed;
  e << YAML::Key << "gpu" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "profile" << YAML::Value << (s.gpu_name.find('/') != std::string::npos
                                                     ? std::filesystem::absolute(s.gpu_name).lexically_normal().string()
                                                     : s.gpu_name);
  e << YAML::Key << "visible" << YAML::Value << s.visible.value_or(s.gpu.capacity_bytes);
  e << YAML::Key << "other_processes" << YAML::Value << s.other_processes;
  e << YAML::Key << "graph_exec_bytes_per_layer" << YAML::Value << s.graph_exec_bytes_per_layer;
  e << YAML::EndMap;
  e << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << s.model_name;
  e << YAML::Key << "tp" << YAML::Value << s.tp;
  e << YAML::EndMap;
  e << YAML::Key << "parallel" << YAML::Value;
  emit_parallel(e, s.parallel);
  e << YAML::Key << "engine" << YAML::Value;
  emit_engine(e, resolved_engine);
  e << YAML::Key << "allocator" << YAML::Value << alloc::to_string(s.allocator);
  e << YAML::Key << "workload" << YAML::Value << workload_node(s, source_text);
  e << YAML::Key << "on_oom" << YAML::Value << (s.on_oom == engine::OnOom::stop ? "stop" : "continue");
  if (s.slo.any()) {
    e << YAML::Key << "slo" << YAML::Value << YAML::BeginMap;
    report::Slo limits = s.slo;
    for (const std::string& key : report::slo_keys())
      if (const std::optional<double> limit = report::slo_limit(limits, key)) e << YAML::Key << key << YAML::Value << *limit;
    e << YAML::EndMap;
  }
  e << YAML::Key << "policy" << YAML::Value;
  emit_policy(e, s.policy);
  if (!s.compare.empty()) {
    e << YAML::Key << "compare" << YAML::Value << YAML::BeginSeq;
    for (const policy::PolicySpec& p : s.compare) emit_policy(e, p);
    e << YAML::EndSeq;
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

std::string resolved_scenario_yaml(const Scenario& s) {
  engine::EngineConfig config = s.engine;
  const engine::Deployment d = deployment(s);
  std::visit([&](auto& c) { engine::resolve(c, d); }, config);
  return resolved_scenario_yaml(s, config);
}

}  // namespace headroom::scenario
