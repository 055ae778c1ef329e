#pragma once
// A scenario file: the GPU, the model, the engine and its knobs, the allocator configuration, the
// workload, the seed, and what to do on an OOM. Every key is documented in docs/scenario.md; unknown
// keys and bad values are errors naming file, line and key, with a did-you-mean.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/allocator/alloc_config.hpp"
#include "sim/core/error.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/server.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/model_config.hpp"
#include "sim/policy/policy.hpp"
#include "sim/report/verdict.hpp"
#include "sim/workload/workload_spec.hpp"

namespace headroom::scenario {

struct Scenario {
  std::string name;             // default: the file's stem
  std::string name_at;          // "<file>:<line>:<col>: key 'name'" where it is given; "" for the stem
  std::string file;
  std::uint64_t seed = 0;       // the workload's seed unless it gives its own
  std::string gpu_name;         // profile name or path as written
  std::string gpu_file;         // the profile YAML read; "" for a built-in profile
  device::GpuProfile gpu;
  std::optional<Bytes> visible; // capacity this process sees (default: the profile's)
  Bytes other_processes = 0;
  // The driver's memory per captured graph size and decoder layer (engine/deployment.hpp).
  Bytes graph_exec_bytes_per_layer = engine::kDefaultGraphExecBytesPerLayer;
  std::string model_name;       // catalogue name or config.json path as written
  std::string model_file;       // the config.json read; "" for a catalogue model
  model::ModelConfig model;
  int tp = 1;
  engine::Parallelism parallel;  // `parallel:` (pp, dp, ep, communicators)
  engine::EngineConfig engine;
  alloc::AllocatorConfig allocator;
  workload::WorkloadSpec workload;
  engine::OnOom on_oom = engine::OnOom::stop;
  report::Slo slo;                            // latency objectives the verdict judges (none by default)
  policy::PolicySpec policy;                  // `run` starts the engine under it (default: engine)
  std::vector<policy::PolicySpec> compare;    // `compare` runs each (default: every policy)

  // Where each engine knob (and each `parallel.<key>`) was set, as an error's prefix ("<file>:<line>:<col>: key 'engine.<knob>'";
  // a sweep grid's axis for a knob it sets), and where the engine mapping is with its key path
  // ("engine", or "base.engine" inline in a grid): an error the engine raises about a knob names
  // that place (located()).
  std::map<std::string, std::string> engine_knob_place;
  std::string engine_where;
  std::string engine_path = "engine";
};

// `e` with the scenario's place of its knob: "<file>:<line>:<col>: key 'engine.<knob>': <e.what()>"
// (the engine mapping's place for a knob the scenario leaves to its default).
InputError located(const Scenario& scenario, const engine::EngineConfigError& e);

// The engine's own checks of its knobs against the model and GPU (engine::resolve on a copy):
// cross-field rules and the limits of engine_limits.hpp, with errors located(); a TP size that does
// not fit the model is named at `tp_place` when given.
void check_engine(const Scenario& scenario, const std::string& tp_place = "");

Scenario load_scenario(const std::filesystem::path& path);

// out/<name>, a command's output folder when no -o is given: InputError naming the key (`name_at`,
// or `file` when the name is the file's stem) when the name would leave out/ (absolute, '..', a path
// separator, empty). A folder given with -o is the user's choice and is not checked.
std::filesystem::path default_output_folder(const std::string& name, const std::string& name_at,
                                            const std::string& file);
inline std::filesystem::path default_output_folder(const Scenario& s) {
  return default_output_folder(s.name, s.name_at, s.file);
}

// The files a scenario's simulation reads besides the scenario itself, with what each is ("GPU
// profile", "model config", "trace", "lengths file"): a sweep keys each point's result on their bytes.
std::vector<std::pair<std::filesystem::path, std::string>> input_files(const Scenario& s);

// `gpu.profile` and `model.name` as the loaders resolve them: the file read, or "" when built in.
std::string gpu_profile_file(const std::string& resolved);
std::string model_config_file(const std::string& resolved);
Scenario parse_scenario(const std::string& yaml, const std::string& file, const std::filesystem::path& folder);
// A scenario mapping inside another YAML file (a sweep grid's inline `base:`); errors name `file`'s
// lines and keys under `path`.
Scenario parse_scenario(const YAML::Node& root, const std::string& file, const std::filesystem::path& folder,
                        const std::string& path);

}  // namespace headroom::scenario
