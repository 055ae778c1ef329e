#pragma once
// Reading back the JSON and text files a command saved in its output folder, for the report page
// builders: every failure is an InputError naming the file (and the field), so `headroom report DIR`
// on a damaged folder exits 2 saying what is wrong.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/report/csv_columns.hpp"

namespace headroom::report {

// The whole file; `written_by` completes "cannot open (is this a <written_by> output folder?)".
std::string read_output_text(const std::filesystem::path& path, const std::string& written_by);
// The file parsed as JSON; "not valid JSON" with the parser's position otherwise.
nlohmann::json read_output_json(const std::filesystem::path& path, const std::string& written_by);
nlohmann::json parse_output_json(const std::string& text, const std::filesystem::path& path);

// An output folder as the report page builders read it: the files saved on disk (`headroom report
// DIR`), or the texts a command is about to write there, so that a command builds its report from
// what it computed and never reads back the files it has just written (issue 14). Messages name
// DIR/<file> either way.
class OutputFolder {
 public:
  // On disk. Implicit: a saved folder is what `headroom report` and the tests hand the builders.
  OutputFolder(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // In memory: file name → the text the command will write.
  OutputFolder(std::filesystem::path dir, std::map<std::string, std::string> files)
      : dir_(std::move(dir)), files_(std::move(files)) {}

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path path(const std::string& name) const { return dir_ / name; }
  bool on_disk() const { return !files_; }
  bool has(const std::string& name) const;
  std::string text(const std::string& name, const std::string& written_by) const;
  nlohmann::json json(const std::string& name, const std::string& written_by) const;
  CsvColumns csv(const std::string& name) const;

 private:
  std::filesystem::path dir_;
  std::optional<std::map<std::string, std::string>> files_;
};

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
