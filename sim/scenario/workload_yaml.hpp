#pragma once
// The `workload:` section of a scenario as a workload::WorkloadSpec (shape: make_source.hpp,
// docs/workloads.md). Every key is checked; unknown keys get a did-you-mean; errors name file:line:col.
#include <filesystem>
#include <string>
#include <string_view>

#include "sim/core/yaml_section.hpp"
#include "sim/workload/workload_spec.hpp"

namespace headroom::scenario {

// Paths: "$HEADROOM_DATA/..." uses that variable (default ../shared/traces); other relative paths
// are taken relative to the scenario file's folder.
std::string resolve_data_path(std::string_view path, const std::filesystem::path& relative_to);

// Throws InputError at `key` of `s` when `written` starts with "$HEADROOM_DATA" and `resolved`
// names no file: the message gives the variable's value and the README section on the public data.
void require_data_file(const YamlSection& s, std::string_view key, std::string_view written,
                       const std::string& resolved);

workload::WorkloadSpec read_workload(const YamlSection& section, const std::filesystem::path& relative_to);

}  // namespace headroom::scenario
