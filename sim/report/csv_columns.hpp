#pragma once
// Reading back the numeric CSV files headroom writes (timeline.csv, requests.csv), column by column,
// to draw them: `headroom report DIR` rebuilds report.html from the saved outputs alone.
#include <filesystem>
#include <string>
#include <vector>

namespace headroom::report {

struct CsvColumns {
  std::string file;
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;  // values[column][row]; an empty cell is NaN
  std::size_t rows() const { return values.empty() ? 0 : values.front().size(); }
  // The column named `name`; InputError naming the file and the column when it is missing.
  const std::vector<double>& column(const std::string& name) const;
};

// Throws InputError naming FILE:LINE and the column for a cell that is not a number or a row with
// the wrong number of cells.
CsvColumns read_csv_columns(const std::filesystem::path& path);
// The same from the file's text (`file` names it in errors).
CsvColumns parse_csv_columns(const std::string& text, const std::string& file);

}  // namespace headroom::report
