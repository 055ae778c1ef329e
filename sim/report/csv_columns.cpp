#include "sim/report/csv_columns.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
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

// A cell that is not a whole number of up to 15 digits: NaN when empty, else from_chars.
double cell_value(std::string_view cell, const CsvColumns& csv, std::size_t number, std::size_t c) {
  if (cell.empty()) return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (ec != std::errc() || end != cell.data() + cell.size() || !std::isfinite(v))
    throw InputError(fmt::format("{}:{}: column {} ({}): expected a finite number, got '{}'", csv.file, number, c + 1,
                                 csv.names[c], printable(cell)));
  return v;
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
  // headroom ends every line it writes with '\n'; without it the file was cut short.
  if (!text.empty() && text.back() != '\n')
    throw InputError(fmt::format("{}:{}: the last line has no line end (the file is truncated)", csv.file,
                                 1 + std::count(text.begin(), text.end(), '\n')));
  const std::string_view all(text);
  std::size_t at = 0;
  // The next line without its end ('\n', and a '\r' before it); false after the last.
  const auto next_line = [&](std::string_view& line) {
    if (at >= all.size()) return false;
    const std::size_t end = std::min(all.find('\n', at), all.size());
    line = all.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  };
  std::string_view line;
  if (!next_line(line)) throw InputError(csv.file + ": empty file, expected a header line");
  for (std::string_view name : split(line)) csv.names.emplace_back(name);
  csv.values.resize(csv.names.size());
  const std::size_t columns = csv.names.size();
  for (std::size_t number = 2; next_line(line); ++number) {
    if (line.empty()) continue;
    // A row of the wrong length is named as such, before any of its cells.
    const auto wrong_length = [&] {
      const std::size_t cells = 1 + static_cast<std::size_t>(std::count(line.begin(), line.end(), ','));
      if (cells != columns)
        throw InputError(fmt::format("{}:{}: expected {} cells, got {}", csv.file, number, columns, cells));
    };
    const char* p = line.data();
    const char* const line_end = p + line.size();
    for (std::size_t c = 0; c < columns; ++c) {
      // One pass over the cell: where it ends, and its value if it is a whole number. Most cells
      // headroom writes are byte counts: up to 15 digits are read as the integer, exactly the double
      // from_chars gives (below 2^53); the rest goes through from_chars.
      const char* const begin = p;
      std::uint64_t n = 0;
      bool digits = true;
      for (; p != line_end && *p != ','; ++p) {
        const auto d = static_cast<std::uint64_t>(static_cast<unsigned char>(*p)) - '0';
        digits = digits && d <= 9;
        n = n * 10 + d;
      }
      if ((p == line_end) != (c + 1 == columns)) wrong_length();  // the line ends before its last cell, or after
      const std::string_view cell(begin, static_cast<std::size_t>(p - begin));
      if (p != line_end) ++p;  // the comma
      if (digits && !cell.empty() && cell.size() <= 15) {
        csv.values[c].push_back(static_cast<double>(n));
      } else {
        try {
          csv.values[c].push_back(cell_value(cell, csv, number, c));
        } catch (const InputError&) {
          wrong_length();
          throw;
        }
      }
    }
  }
  return csv;
}

}  // namespace headroom::report
