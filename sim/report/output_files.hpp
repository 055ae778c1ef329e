#pragma once
// Reading back the JSON and text files a command saved in its output folder, for the report page
// builders: every failure is an InputError naming the file (and the field), so `headroom report DIR`
// on a damaged folder exits 2 saying what is wrong.
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"

namespace headroom::report {

// The whole file; `written_by` completes "cannot open (is this a <written_by> output folder?)".
std::string read_output_text(const std::filesystem::path& path, const std::string& written_by);
// The file parsed as JSON; "not valid JSON" with the parser's position otherwise.
nlohmann::json read_output_json(const std::filesystem::path& path, const std::string& written_by);

// A field of a saved JSON file, with an error naming the file and the field when it is absent or of
// the wrong type.
template <class T>
T output_field(const nlohmann::json& j, const nlohmann::json::json_pointer& at, const std::string& file) {
  try {
    return j.at(at).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("{}: field {}: missing or of the wrong type", file, at.to_string()));
  }
}

}  // namespace headroom::report
