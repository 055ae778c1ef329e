#pragma once
// Loading a user's YAML text with the limits of sim/core/limits.hpp checked first: one document
// only (yaml-cpp's Load silently drops the rest), at most kMaxYamlNodes nodes nested at most
// kMaxYamlDepth deep, at most kMaxTextFileBytes of text. A first pass over the parser's events
// counts without building nodes, so a hostile file costs no more than its text.
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace headroom {

// The document's root (a null node for an empty text). Throws InputError "<file>:<line>:<col>: ..."
// for text that is not YAML, holds a second document, or exceeds a limit.
YAML::Node load_yaml(std::string_view text, const std::string& file);

}  // namespace headroom
