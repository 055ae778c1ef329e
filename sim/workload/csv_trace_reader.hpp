#pragma once
// The part of the CSV readers that is the same for every CSV format: the header, found columns
// by name (any order, extra columns allowed), and splitting rows with a column-count check.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sim/workload/trace_reader.hpp"

namespace headroom::workload {

class CsvTraceReader : public TraceReader {
 protected:
  // `header` is the file's first line (already read from `lines`).
  CsvTraceReader(std::unique_ptr<LineReader> lines, std::string_view header, TraceFormat format,
                 TraceOptions options, bool timed);

  // 0-based index of a column the format requires; the format was detected from the same
  // header, so it is present.
  std::size_t column(std::string_view name) const;
  // Splits the row into fields() or reports "expected N columns (HEADER), got M".
  void split(std::string_view line);
  std::string_view field(std::size_t index) const { return fields_[index]; }
  const std::string& column_name(std::size_t index) const { return names_[index]; }
  // token_field() for the column at `index`.
  Tokens tokens_at(std::size_t index) const;

 private:
  std::vector<std::string> names_;
  std::string header_;
  std::vector<std::string_view> fields_;
};

}  // namespace headroom::workload
