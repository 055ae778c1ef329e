#pragma once
// The release lines of an engine this simulator models, each described once as data (a row of the
// engine's table: <engine>_versions.cpp): the scenario's `engine.version` names a row; reading,
// the error listing the modelled versions and the docs derive from the table.
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::engine {

// "0.6, 0.8, 0.10, current": the names of a version table, oldest first, in the order the table lists them.
template <class Rules>
std::string version_names(std::span<const Rules> table) {
  std::string names;
  for (const Rules& r : table) names += (names.empty() ? "" : ", ") + std::string(r.name);
  return names;
}

// The row `text` names, or an InputError naming `what` and every modelled version.
template <class Rules>
const Rules& find_version(std::span<const Rules> table, std::string_view text, std::string_view engine_label,
                          std::string_view what) {
  for (const Rules& r : table)
    if (text == r.name) return r;
  throw InputError(fmt::format("{}: expected a modelled {} version, one of {}, got '{}'", what, engine_label,
                               version_names(table), text));
}

// The row of `version`; every enum value has one (the tables' tests check it).
template <class Rules, class Version>
const Rules& version_rules(std::span<const Rules> table, Version version) {
  for (const Rules& r : table)
    if (r.version == version) return r;
  return table.back();
}

}  // namespace headroom::engine
