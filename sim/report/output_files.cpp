#include "sim/report/output_files.hpp"

#include <fstream>
#include <sstream>

namespace headroom::report {

std::string read_output_text(const std::filesystem::path& path, const std::string& written_by) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open (is this a `{}` output folder?)", path.string(), written_by));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json read_output_json(const std::filesystem::path& path, const std::string& written_by) {
  try {
    return nlohmann::json::parse(read_output_text(path, written_by));
  } catch (const nlohmann::json::exception& e) {  // parse errors, and numbers out of range (1e400)
    throw InputError(fmt::format("{}: not valid JSON ({})", path.string(), e.what()));
  }
}

}  // namespace headroom::report
