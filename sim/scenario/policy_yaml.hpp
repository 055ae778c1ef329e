#pragma once
// Policies in YAML: a scenario's `compare:` list or a `--policies FILE`. Each entry is a policy kind
// alone (`- profiled`) or a one-key mapping of the kind to its parameters
// (`- fragmentation_buffer: {k: 2, floor: 150MiB}`); `allocator` takes its configuration string
// (`- allocator: "expandable_segments:True"`). Keys are documented in docs/scenario.md.
#include <filesystem>
#include <string>
#include <vector>

#include "sim/core/yaml_section.hpp"
#include "sim/policy/policy.hpp"

namespace headroom::scenario {

// Reads the list under `key` of `parent` (which must be present).
std::vector<policy::PolicySpec> read_policies(const YamlSection& parent, std::string_view key);

// A policies file: a YAML list of entries, or a mapping with a `compare:` list.
std::vector<policy::PolicySpec> load_policies(const std::filesystem::path& path);

// Writes one entry in the format read_policies reads, every parameter of its kind spelled out.
void emit_policy(YAML::Emitter& out, const policy::PolicySpec& spec);

// Every policy kind with its defaults, the engine first: `compare` without a list.
std::vector<policy::PolicySpec> default_policies();

}  // namespace headroom::scenario
