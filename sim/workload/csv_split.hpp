#pragma once
// Splitting one CSV line into fields (RFC 4180 subset: comma separator, double-quoted fields
// with "" for a quote inside; a quoted field cannot span lines). Fields are views into the line,
// trimmed of surrounding spaces and tabs; a quoted field is its text between the quotes, with
// any doubled quotes left doubled (the readers only interpret unquoted numeric fields).
#include <cstddef>
#include <string_view>
#include <vector>

namespace headroom::workload {

// Fills `fields` (reusing its storage). Returns false on an unterminated quote or text after a
// closing quote; `fields.size()` is then the 0-based index of the field at fault.
bool split_csv(std::string_view line, std::vector<std::string_view>& fields);

}  // namespace headroom::workload
