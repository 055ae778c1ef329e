#include "sim/engine/engine_registry.hpp"

#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::engine {

// Defined in each engine's <engine>_traits.cpp.
const EngineTraits& vllm_traits();
const EngineTraits& sglang_traits();
const EngineTraits& lightllm_traits();

std::span<const EngineTraits* const> engines() {
  // One line per engine; the order is the order users see them listed.
  static const EngineTraits* const all[] = {
      &vllm_traits(),
      &sglang_traits(),
      &lightllm_traits(),
  };
  return all;
}

const EngineTraits& engine_traits(model::Engine id) {
  for (const EngineTraits* t : engines())
    if (t->id == id) return *t;
  throw std::logic_error("engine_traits: an engine id with no registered description");
}

const EngineTraits& engine_traits(const EngineConfig& config) {
  for (const EngineTraits* t : engines())
    if (t->holds(config)) return *t;
  throw std::logic_error("engine_traits: a configuration with no registered engine");
}

const EngineTraits* find_engine(std::string_view name) {
  for (const EngineTraits* t : engines())
    if (t->name == name) return t;
  return nullptr;
}

const EngineTraits& engine_named(std::string_view name, std::string_view what) {
  if (const EngineTraits* t = find_engine(name)) return *t;
  std::string names;
  for (const EngineTraits* t : engines()) names += (names.empty() ? "" : ", ") + std::string(t->name);
  throw InputError(fmt::format("{}: expected one of {}, got '{}'", what, names, name));
}

const EngineTraits* engine_with_fraction_knob(std::string_view knob) {
  for (const EngineTraits* t : engines())
    if (t->fraction_knob == knob) return t;
  return nullptr;
}

}  // namespace headroom::engine
