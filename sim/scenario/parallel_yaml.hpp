#pragma once
// The `parallel:` section of a scenario: pipeline, data and expert parallelism (the tensor-parallel
// size stays `model.tp`) and the communicators' parameters that depend on the NCCL version and the
// topology (docs/scenario.md, docs/serving-memory-model.md §9). Every key is described once in
// kParallelKeys; reading and writing walk that table.
#include <map>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/core/yaml_section.hpp"
#include "sim/engine/parallel_ranks.hpp"

namespace headroom::scenario {

// Reads the section; `places` gets "parallel.<key>" → "<file>:<line>:<col>: key '<path>'" for each
// key given, so that an engine's error about one names its line.
engine::Parallelism read_parallel(const YamlSection& section, std::map<std::string, std::string>& places);

// Writes the section with every default filled in.
void emit_parallel(YAML::Emitter& e, const engine::Parallelism& parallel);

}  // namespace headroom::scenario
