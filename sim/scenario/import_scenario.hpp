#pragma once
// `headroom import` and `headroom run --cmd`: a server's command line (vllm serve, python -m
// sglang.launch_server, python -m lightllm.server.api_server) turned into a complete scenario, every
// recognised flag as its engine knob (docs/import.md). The workload and GPU come from --workload and
// --gpu, or else from the quickstart, and the scenario says so.
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace headroom::scenario {

struct ImportInputs {
  std::vector<std::string> words;  // the command line, already split into words
  std::string what;                // how errors name it: "engine command line", "--cmd"
  std::optional<std::string> workload;  // --workload: a scenario or workload YAML, or a trace file
  std::optional<std::string> gpu;       // --gpu: a built-in profile name or a profile YAML
};

struct ImportedScenario {
  std::string yaml;                  // the scenario, with comments saying where each part came from
  std::string name;                  // its `name`: "<engine>-<model>"
  std::vector<std::string> notes;    // what a user should know: flags ignored, defaults taken
};

// Reads the command line (engine::read_engine_command_line), resolves the model (a catalogue name,
// a Hub id the catalogue knows, or a local folder holding config.json), the GPU and the workload, and
// checks the result as `headroom run` would (parse_scenario, check_engine). InputError on anything
// wrong, naming the flag or file.
ImportedScenario import_scenario(const ImportInputs& in);

// The quickstart's synthetic workload (scenarios/quickstart.yaml), the one an import without
// --workload uses, as YAML.
const char* quickstart_workload_yaml();

}  // namespace headroom::scenario
