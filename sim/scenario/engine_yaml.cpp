#include "sim/scenario/engine_yaml.hpp"

#include <string>
#include <vector>

#include "sim/engine/engine_registry.hpp"

namespace headroom::scenario {

engine::EngineConfig read_engine(const YamlSection& s) {
  std::vector<std::string> names;
  for (const engine::EngineTraits* e : engine::engines()) names.emplace_back(e->name);
  return engine::engine_named(s.choice("kind", names), "kind").read_knobs(s);
}

}  // namespace headroom::scenario
