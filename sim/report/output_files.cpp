#include "sim/report/output_files.hpp"

#include <fstream>
#include <sstream>

#include "sim/core/input_file.hpp"

namespace headroom::report {

std::string read_output_text(const std::filesystem::path& path, const std::string& written_by) {
  refuse_special_file(path, "saved output");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open (is this a `{}` output folder?)", path.string(), written_by));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json parse_output_json(const std::string& text, const std::filesystem::path& path) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse errors, and numbers out of range (1e400)
    throw InputError(fmt::format("{}: not valid JSON ({})", path.string(), e.what()));
  }
}

nlohmann::json read_output_json(const std::filesystem::path& path, const std::string& written_by) {
  return parse_output_json(read_output_text(path, written_by), path);
}

bool OutputFolder::has(const std::string& name) const {
  if (files_) return files_->count(name) > 0;
  std::error_code ec;
  return std::filesystem::exists(path(name), ec);
}

std::string OutputFolder::text(const std::string& name, const std::string& written_by) const {
  if (!files_) return read_output_text(path(name), written_by);
  const auto it = files_->find(name);
  if (it == files_->end())
    throw InputError(fmt::format("{}: cannot open (is this a `{}` output folder?)", path(name).string(), written_by));
  return it->second;
}

nlohmann::json OutputFolder::json(const std::string& name, const std::string& written_by) const {
  return parse_output_json(text(name, written_by), path(name));
}

CsvColumns OutputFolder::csv(const std::string& name) const {
  if (!files_) return read_csv_columns(path(name));
  const auto it = files_->find(name);
  if (it == files_->end()) throw InputError(path(name).string() + ": cannot open");
  return parse_csv_columns(it->second, path(name).string());
}

}  // namespace headroom::report
