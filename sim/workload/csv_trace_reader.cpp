#include "sim/workload/csv_trace_reader.hpp"

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/workload/csv_split.hpp"

namespace headroom::workload {

CsvTraceReader::CsvTraceReader(std::unique_ptr<LineReader> lines, std::string_view header,
                               TraceFormat format, TraceOptions options, bool timed)
    : TraceReader(std::move(lines), format, options, timed), header_(header) {
  std::vector<std::string_view> names;
  split_csv(header, names);
  for (auto n : names) names_.emplace_back(n);
  fields_.reserve(names_.size() + 1);
}

std::size_t CsvTraceReader::column(std::string_view name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  if (it == names_.end())  // detect_format() guarantees it; a reader used directly may not
    throw InputError(file() + ":1: the header has no column '" + std::string(name) + "'");
  return static_cast<std::size_t>(it - names_.begin());
}

void CsvTraceReader::split(std::string_view line) {
  if (!split_csv(line, fields_))
    bad_row("column " + std::to_string(fields_.size() + 1) + ": unterminated quoted field or text after its closing quote");
  if (fields_.size() != names_.size())
    bad_row("expected " + std::to_string(names_.size()) + " columns (" + header_ + "), got " +
            std::to_string(fields_.size()));
}

Tokens CsvTraceReader::tokens_at(std::size_t index) const {
  return token_field(fields_[index], index + 1, names_[index]);
}

}  // namespace headroom::workload
