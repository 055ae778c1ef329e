// Fuzz target: a scenario file (load_scenario, as `headroom run FILE.yaml` reads it), then its
// resolved form (resolved_scenario_yaml, written beside every run's outputs), which must load again.
//
// Files a scenario names: the GPU profile (gpu.profile) and the model's config.json (model.name)
// are read at load time, relative to the scenario's folder (here the target's scratch folder, which
// holds one profile, gpu.yaml, to find) or, for a bare name, to the working folder. So that fuzz
// input cannot make the target read other files, an input whose gpu.profile or model.name is
// absolute, climbs with "..", starts with '$' ($HEADROOM_DATA) or names an existing file of the
// working folder is not run (-1: libFuzzer does not add it to the corpus). Trace paths are only
// stored at load time, never opened.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <yaml-cpp/yaml.h>

#include "fuzz/support/finding.hpp"
#include "fuzz/support/scratch_file.hpp"
#include "sim/core/error.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/scenario/resolved_scenario.hpp"
#include "sim/scenario/scenario.hpp"

namespace {

const std::filesystem::path& sandbox() {
  static const std::filesystem::path folder = [] {
    const auto& scratch = headroom::fuzz::scratch();
    scratch.write("gpu.yaml", headroom::device::gpu_profile_yaml(headroom::device::load_gpu_profile("h100-sxm-80gb")));
    return scratch.path();
  }();
  return folder;
}

// A file reference that stays inside the scratch folder (or names a built-in profile or model).
bool stays_inside(const YAML::Node& section, const char* key) {
  if (!section || !section.IsMap()) return true;  // absent (an invalid node) or not a mapping
  const YAML::Node value = section[key];
  if (!value || !value.IsScalar()) return true;
  const std::string& text = value.Scalar();
  if (text.starts_with('/') || text.starts_with('$') || text.find("..") != std::string::npos) return false;
  std::error_code ec;
  return !std::filesystem::exists(text, ec);  // relative to the working folder, as load_model looks
}

bool references_stay_inside(std::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception&) {
    return true;  // load_scenario reports it without opening anything
  }
  if (!root.IsMap()) return true;
  const YAML::Node& const_root = root;
  return stays_inside(const_root["gpu"], "profile") && stays_inside(const_root["model"], "name");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view yaml = headroom::fuzz::as_text(data, size);
  (void)sandbox();
  if (!references_stay_inside(yaml)) return -1;
  headroom::scenario::Scenario scenario;
  try {
    scenario = headroom::scenario::load_scenario(headroom::fuzz::scratch().write("scenario.yaml", yaml));
  } catch (const headroom::InputError&) {
    return 0;
  }
  std::string resolved;
  try {
    resolved = headroom::scenario::resolved_scenario_yaml(scenario);
  } catch (const headroom::InputError&) {
    return 0;  // engine knobs the engine rejects at start-up (resolved_scenario.hpp)
  }
  try {
    (void)headroom::scenario::load_scenario(headroom::fuzz::scratch().write("resolved.yaml", resolved));
  } catch (const headroom::InputError& e) {
    headroom::fuzz::require(false, std::string("the resolved scenario does not load: ") + e.what() + "\n" + resolved);
  }
  return 0;
}
