#include "sim/scenario/import_scenario.hpp"

#include <cctype>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/shell_words.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/yaml_load.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/engine/engine_command_line.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/scenario/scenario.hpp"

namespace headroom::scenario {

namespace fs = std::filesystem;

namespace {

// The quickstart's GPU (scenarios/quickstart.yaml), for an import without --gpu.
constexpr const char* kQuickstartGpu = "h100-sxm-80gb";

// A name fit for out/<name>: the model's last path part, anything but [A-Za-z0-9._-] made '-'.
std::string plain_name(std::string_view engine, std::string model) {
  while (model.size() > 1 && model.back() == '/') model.pop_back();
  model = fs::path(model).filename().string();
  for (char& c : model)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
  if (model.empty() || model == "." || model == "..") model = "model";
  return fmt::format("{}-{}", engine, model);
}

// The model as the scenario names it: an absolute path for a local file or folder (the scenario may
// be written anywhere), else a catalogue name or Hub id the catalogue knows.
std::string resolve_model(const engine::ImportedCommandLine& cl, const std::string& what) {
  std::error_code ec;
  if (fs::exists(cl.model, ec)) {
    const fs::path p = fs::absolute(cl.model);
    const fs::path config = fs::is_directory(p, ec) ? p / "config.json" : p;
    if (!fs::is_regular_file(config, ec))
      throw InputError(fmt::format("{}: {} '{}': the folder holds no config.json (headroom reads the model's "
                                   "architecture from it)",
                                   what, cl.model_flag, cl.model));
    fs::path normal = p.lexically_normal();
    if (normal.filename().empty()) normal = normal.parent_path();  // "model/" names the folder "model"
    return normal.string();
  }
  try {
    (void)model::catalogue_model(cl.model);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {} '{}' is neither a local folder nor a model headroom knows: {}", what,
                                 cl.model_flag, cl.model, e.what()));
  }
  return cl.model;
}

std::string resolve_gpu(const std::optional<std::string>& gpu) {
  if (!gpu) return kQuickstartGpu;
  std::error_code ec;
  std::string profile = *gpu;
  if (fs::exists(profile, ec)) profile = fs::absolute(profile).lexically_normal().string();
  try {
    (void)device::load_gpu_profile(profile);
  } catch (const InputError& e) {
    throw InputError(fmt::format("--gpu: {}", e.what()));
  }
  return profile;
}

// A relative path inside the workload file, made absolute against that file's folder.
void absolute_path(YAML::Node parent, const fs::path& folder) {
  if (!parent || !parent.IsMap() || !parent["path"] || !parent["path"].IsScalar()) return;
  const std::string p = parent["path"].as<std::string>();
  if (p.starts_with("$HEADROOM_DATA") || fs::path(p).is_absolute()) return;
  parent["path"] = (folder / p).lexically_normal().string();
}

// --workload: a YAML file holding a scenario (its `workload:` is taken) or a workload mapping, or a
// trace file. Returns the workload mapping.
YAML::Node read_workload(const std::string& file) {
  const fs::path path = fs::absolute(file).lexically_normal();
  const std::string ext = path.extension().string();
  if (ext != ".yaml" && ext != ".yml") {
    refuse_special_file(path, "trace");
    std::error_code ec;
    if (!fs::exists(path, ec)) throw InputError(fmt::format("--workload: {}: no such file", file));
    if (fs::is_directory(path, ec))
      throw InputError(fmt::format("--workload: {}: is a folder; expected a trace or a workload YAML", file));
    YAML::Node w;
    w["trace"]["path"] = path.string();
    return w;
  }
  const YAML::Node root = load_yaml(read_text_file(path, "workload"), path.string());
  YAML::Node w = root.IsMap() && root["workload"] ? root["workload"] : root;
  if (!w.IsMap() || (!w["trace"] && !w["synthetic"]))
    throw InputError(fmt::format("{}: expected a workload (a mapping with 'trace' or 'synthetic', docs/scenario.md) "
                                 "or a scenario holding one",
                                 path.string()));
  w = YAML::Clone(w);
  absolute_path(w["trace"], path.parent_path());
  if (w["synthetic"] && w["synthetic"].IsMap()) absolute_path(w["synthetic"]["lengths_file"], path.parent_path());
  return w;
}

void comment_list(std::string& out, std::string_view title, const std::vector<std::string>& items) {
  if (items.empty()) return;
  std::string line = fmt::format("# {}:", title);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = " " + items[i] + (i + 1 < items.size() ? "," : "");
    if (line.size() + item.size() > 100) out += line + "\n", line = "#  ";
    line += item;
  }
  out += line + "\n";
}

// The `parallel:` keys the flags set; a boolean `ep` (vLLM --enable-expert-parallel) becomes the
// expert-parallel size it implies, tp × dp (fused_moe/config.py FusedMoEParallelConfig.make).
void emit_imported_parallel(YAML::Emitter& e, const engine::ImportedCommandLine& cl) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const engine::KnobSetting& k : cl.parallel) {
    if (k.key == "ep" && (k.values.front() == "true" || k.values.front() == "false")) {
      if (k.values.front() == "false") continue;
      std::int64_t dp = 1;
      for (const engine::KnobSetting& d : cl.parallel)
        if (d.key == "dp") dp = std::stoll(d.values.front());
      keys.emplace_back("ep", std::to_string(cl.tp.value_or(1) * dp));
      continue;
    }
    keys.emplace_back(k.key, k.values.front());
  }
  if (keys.empty()) return;
  e << YAML::Key << "parallel" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [key, value] : keys) e << YAML::Key << key << YAML::Value << value;
  e << YAML::EndMap;
}

}  // namespace

const char* quickstart_workload_yaml() {
  return "synthetic:\n"
         "  requests: 3000\n"
         "  arrivals: {process: gamma, rate: 12, cv: 4}\n"
         "  input: {dist: lognormal, mean: 1500, cv: 1.2, max: 16384}\n"
         "  output: {dist: lognormal, mean: 250, cv: 1.0, max: 2048}\n";
}

ImportedScenario import_scenario(const ImportInputs& in) {
  const engine::ImportedCommandLine cl = engine::read_engine_command_line(in.words, in.what);
  const std::string model = resolve_model(cl, in.what);
  const std::string gpu = resolve_gpu(in.gpu);
  const YAML::Node workload = in.workload ? read_workload(*in.workload) : YAML::Load(quickstart_workload_yaml());

  ImportedScenario out;
  out.name = plain_name(cl.engine->name, cl.model);
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << out.name;
  e << YAML::Key << "seed" << YAML::Value << 1;
  e << YAML::Key << "gpu" << YAML::Value << YAML::BeginMap << YAML::Key << "profile" << YAML::Value << gpu
    << YAML::EndMap;
  e << YAML::Key << "model" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << model;
  if (cl.tp) e << YAML::Key << "tp" << YAML::Value << *cl.tp;
  e << YAML::EndMap;
  emit_imported_parallel(e, cl);
  e << YAML::Key << "engine" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "kind" << YAML::Value << std::string(cl.engine->name);
  for (const engine::KnobSetting& k : cl.knobs) {
    e << YAML::Key << k.key << YAML::Value;
    if (!k.list) {
      e << k.values.front();
      continue;
    }
    e << YAML::Flow << YAML::BeginSeq;
    for (const std::string& v : k.values) e << v;
    e << YAML::EndSeq;
  }
  e << YAML::EndMap;
  if (cl.allocator) e << YAML::Key << "allocator" << YAML::Value << YAML::DoubleQuoted << *cl.allocator;
  e << YAML::Key << "workload" << YAML::Value << workload;
  e << YAML::Key << "on_oom" << YAML::Value << "stop";
  e << YAML::EndMap;
  if (!e.good()) throw InputError(fmt::format("{}: cannot write the scenario: {}", in.what, e.GetLastError()));

  std::vector<std::string> read;
  for (const engine::KnobSetting& k : cl.knobs) read.push_back(k.flag);
  for (const engine::KnobSetting& k : cl.parallel) read.push_back(k.flag);
  std::string text = fmt::format("# Imported by headroom import (docs/import.md) from {}:\n#   {}\n",
                                 cl.engine->label, shell_join(cl.shown));
  comment_list(text, "Flags read into engine knobs", read);
  comment_list(text, "Ignored (no effect on GPU memory or step time)", cl.ignored);
  if (!in.gpu) {
    text += fmt::format("# GPU: the quickstart's {} (no --gpu given)\n", kQuickstartGpu);
    out.notes.push_back(fmt::format("gpu: the quickstart's {} (no --gpu given)", kQuickstartGpu));
  }
  if (!in.workload) {
    text += "# Workload: the quickstart's synthetic workload (no --workload given); put your traffic here\n";
    out.notes.push_back("workload: the quickstart's synthetic workload (no --workload given)");
  }
  if (!cl.ignored.empty()) out.notes.push_back(fmt::format("ignored: {}", fmt::join(cl.ignored, ", ")));
  out.yaml = text + e.c_str() + "\n";

  // As `headroom run` would read it: any rule across knobs, the model and the GPU fails here, naming
  // the scenario's key.
  (void)parse_scenario(out.yaml, in.what, fs::current_path());
  return out;
}

}  // namespace headroom::scenario
