#include "sim/workload/csv_split.hpp"

namespace headroom::workload {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool split_csv(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  std::size_t i = 0;
  for (;;) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i < line.size() && line[i] == '"') {
      const std::size_t open = ++i;
      for (;;) {
        if (i >= line.size()) return false;  // unterminated
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            i += 2;
            continue;
          }
          break;
        }
        ++i;
      }
      const std::string_view field = line.substr(open, i - open);
      ++i;  // closing quote
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != ',') return false;  // text after the closing quote
      fields.push_back(field);
    } else {
      const std::size_t comma = line.find(',', i);
      const std::size_t stop = comma == std::string_view::npos ? line.size() : comma;
      fields.push_back(trim(line.substr(i, stop - i)));
      i = stop;
    }
    if (i >= line.size()) return true;
    ++i;  // the comma
  }
}

}  // namespace headroom::workload
