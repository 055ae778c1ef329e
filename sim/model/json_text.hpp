#pragma once
// Parsing a user's JSON text (config.json, step descriptions) within the limits of
// sim/core/limits.hpp: at most kMaxJsonValues values nested at most kMaxJsonDepth deep, checked
// while parsing, so that a hostile file is refused before its tree is built.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace headroom::model {

// Throws InputError "<file>: not valid JSON: ..." or "<file>: ... above the limit ...".
nlohmann::json parse_json_text(std::string_view text, const std::string& file);

}  // namespace headroom::model
