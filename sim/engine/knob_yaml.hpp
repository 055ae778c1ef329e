#pragma once
// An engine's knobs in a scenario's `engine:` mapping, under the engine's own names: the helpers
// each engine's <engine>_yaml.cpp shares to read them and to write them back (EngineTraits
// read_knobs, write_knobs; the writer puts `kind` first into the open mapping).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/yaml_section.hpp"
#include "sim/engine/engine_config.hpp"

namespace headroom::engine {

namespace knob_yaml {

inline std::int64_t whole(const YamlSection& s, std::string_view key, std::int64_t lo, std::int64_t hi = INT64_MAX) {
  return s.integer(key, s.required(key), lo, hi);
}
template <class T>
void optional_whole(const YamlSection& s, std::string_view key, std::optional<T>& out, std::int64_t lo,
                    std::int64_t hi = INT64_MAX) {
  if (s.present(key)) out = static_cast<T>(whole(s, key, lo, hi));
}
template <class T>
void whole_into(const YamlSection& s, std::string_view key, T& out, std::int64_t lo, std::int64_t hi = INT64_MAX) {
  if (s.present(key)) out = static_cast<T>(whole(s, key, lo, hi));
}
inline double fraction(const YamlSection& s, std::string_view key) {
  YAML::Node v = s.required(key);
  double d = s.number(key, v, false);
  if (d > 1.0) s.fail(v, key, fmt::format("expected a fraction in (0, 1], got '{}'", s.scalar(key, v)));
  return d;
}
inline std::vector<int> size_list(const YamlSection& s, std::string_view key) {
  YAML::Node v = s.required(key);
  if (!v.IsSequence()) s.fail(v, key, "expected a list of batch sizes, e.g. [1, 2, 4, 8]");
  std::vector<int> out;
  for (const auto& item : v) out.push_back(static_cast<int>(s.integer(key, item, 1, 1 << 20)));
  return out;
}
// A value one of the engine layer's parsers reads (they name `what` in their errors).
template <class Parse>
auto parsed(const YamlSection& s, std::string_view key, Parse&& parse) {
  YAML::Node v = s.required(key);
  return parse(s.scalar(key, v), fmt::format("{}: key '{}'", s.where(v), s.key_path(key)));
}

template <class T>
void opt(YAML::Emitter& e, const char* key, const std::optional<T>& v) {
  if (v) e << YAML::Key << key << YAML::Value << *v;
}
inline void sizes(YAML::Emitter& e, const char* key, const std::optional<std::vector<int>>& v) {
  if (!v) return;
  e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int s : *v) e << s;
  e << YAML::EndSeq;
}
inline std::string str(std::string_view s) { return std::string(s); }

}  // namespace knob_yaml

}  // namespace headroom::engine
