#include "sim/report/csv_columns.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <fstream>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/text_file.hpp"

namespace headroom::report {

namespace {

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> cells;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = line.find(',', start);
    cells.push_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return cells;
    start = comma + 1;
  }
}

}  // namespace

const std::vector<double>& CsvColumns::column(const std::string& name) const {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return values[i];
  throw InputError(fmt::format("{}: no column '{}' (was it written by this version of headroom?)", file, name));
}

CsvColumns read_csv_columns(const std::filesystem::path& path) {
  refuse_special_file(path, "saved output");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path.string() + ": cannot open");
  std::stringstream text;
  text << file.rdbuf();
  return parse_csv_columns(text.str(), path.string());
}

CsvColumns parse_csv_columns(const std::string& text, const std::string& file) {
  CsvColumns csv;
  csv.file = file;
  std::istringstream in(text);
  // headroom ends every line it writes with '\n'; without it the file was cut short.
  if (!text.empty() && text.back() != '\n')
    throw InputError(fmt::format("{}:{}: the last line has no line end (the file is truncated)", csv.file,
                                 1 + std::count(text.begin(), text.end(), '\n')));
  std::string line;
  if (!std::getline(in, line)) throw InputError(csv.file + ": empty file, expected a header line");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  for (std::string_view name : split(line)) csv.names.emplace_back(name);
  csv.values.resize(csv.names.size());
  for (std::size_t number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string_view> cells = split(line);
    if (cells.size() != csv.names.size())
      throw InputError(fmt::format("{}:{}: expected {} cells, got {}", csv.file, number, csv.names.size(), cells.size()));
    for (std::size_t c = 0; c < cells.size(); ++c) {
      double v = std::numeric_limits<double>::quiet_NaN();
      if (!cells[c].empty()) {
        auto [end, ec] = std::from_chars(cells[c].data(), cells[c].data() + cells[c].size(), v);
        if (ec != std::errc() || end != cells[c].data() + cells[c].size() || !std::isfinite(v))
          throw InputError(fmt::format("{}:{}: column {} ({}): expected a finite number, got '{}'", csv.file, number, c + 1,
                                       csv.names[c], printable(cells[c])));
      }
      csv.values[c].push_back(v);
    }
  }
  return csv;
}

}  // namespace headroom::report
