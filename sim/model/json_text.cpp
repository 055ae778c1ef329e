#include "sim/model/json_text.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/out_of_memory.hpp"

namespace headroom::model {

nlohmann::json parse_json_text(std::string_view text, const std::string& file) {
  using json = nlohmann::json;
  std::size_t values = 0;
  auto guard = [&](int depth, json::parse_event_t event, json&) {
    if (event == json::parse_event_t::key || event == json::parse_event_t::object_end ||
        event == json::parse_event_t::array_end)
      return true;
    if (++values > limits::kMaxJsonValues)
      throw InputError(fmt::format("{}: more than {} JSON values, above the limit for one file (docs/limits.md)", file,
                                   limits::kMaxJsonValues));
    if (depth > limits::kMaxJsonDepth)
      throw InputError(fmt::format("{}: arrays and objects nested more than {} deep, above the limit (docs/limits.md)",
                                   file, limits::kMaxJsonDepth));
    return true;
  };
  try {
    return while_doing(fmt::format("parsing the JSON of {}", file),
                       [&] { return json::parse(text.begin(), text.end(), guard); });
  } catch (const json::exception& e) {  // parse errors, and numbers out of range (1e400)
    // e.what() is "[json.exception.parse_error.101] parse error at line L, column C: ..."
    std::string what = e.what();
    if (auto cut = what.find("] "); cut != std::string::npos) what = what.substr(cut + 2);
    throw InputError(fmt::format("{}: not valid JSON: {}", file, what));
  }
}

}  // namespace headroom::model
