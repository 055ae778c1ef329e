#include "sim/workload/mooncake_jsonl.hpp"

#include "sim/core/text_file.hpp"
#include "sim/workload/field_parse.hpp"

namespace headroom::workload {

namespace {

// A position in one line, with the scanning steps a flat JSON object needs. Columns in
// messages are 1-based byte offsets.
struct Cursor {
  std::string_view s;
  std::size_t i = 0;

  bool done() const { return i >= s.size(); }
  char peek() const { return done() ? '\0' : s[i]; }
  std::size_t column() const { return i + 1; }
  void skip_ws() {
    while (!done() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  // What is at the cursor, for "got '...'" in messages.
  std::string shown() const {
    if (done()) return "end of line";
    return "'" + printable(s.substr(i, 1)) + "'";
  }
  // A string's contents (escapes left as written); the cursor is on its opening quote.
  bool string(std::string_view& out) {
    const std::size_t open = ++i;
    while (!done() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
    if (done()) return false;
    out = s.substr(open, i - open);
    ++i;
    return true;
  }
  // A number or literal: everything up to the next delimiter.
  std::string_view scalar() {
    const std::size_t start = i;
    if (peek() == '"') {
      std::string_view ignored;
      string(ignored);
      return s.substr(start, i - start);
    }
    while (!done() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t') ++i;
    return s.substr(start, i - start);
  }
  // Skips any JSON value (for keys this reader does not use). False if it is cut short.
  bool skip_value() {
    if (peek() != '{' && peek() != '[') return !scalar().empty();
    int depth = 0;
    while (!done()) {
      const char c = s[i];
      if (c == '"') {
        std::string_view ignored;
        if (!string(ignored)) return false;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') --depth;
      ++i;
      if (depth == 0) return true;
    }
    return false;
  }
};

}  // namespace

MooncakeJsonlReader::MooncakeJsonlReader(std::unique_ptr<LineReader> lines, TraceOptions options)
    : TraceReader(std::move(lines), TraceFormat::mooncake_jsonl, options, /*timed=*/true) {}

void MooncakeJsonlReader::parse_row(std::string_view line, Request& r, RowTime& time) {
  Cursor c{line};
  auto expected = [&](const std::string& what) {
    bad_row("column " + std::to_string(c.column()) + ": expected " + what + ", got " + c.shown());
  };
  bool has_time = false, has_input = false, has_output = false, has_hashes = false;
  c.skip_ws();
  if (c.peek() != '{') expected("'{' (one JSON object per line)");
  ++c.i;
  c.skip_ws();
  if (c.peek() == '}') {
    ++c.i;
  } else {
    for (;;) {
      if (c.peek() != '"') expected("a quoted key");
      std::string_view key;
      if (!c.string(key)) expected("the closing quote of the key");
      c.skip_ws();
      if (c.peek() != ':') expected("':' after the key");
      ++c.i;
      c.skip_ws();
      const std::size_t value_column = c.column();
      auto value_error = [&](std::string_view value, const char* what) {
        bad_row("column " + std::to_string(value_column) + " (" + std::string(key) + "): expected " + what +
                ", got '" + printable(value) + "'");
      };
      if (key == "timestamp") {
        time.text = c.scalar();
        if (!parse_milliseconds_as_ns(time.text, time.ns)) value_error(time.text, "a non-negative number of milliseconds");
        has_time = true;
      } else if (key == "input_length" || key == "output_length") {
        const Tokens v = token_field(c.scalar(), value_column, key);
        (key == "input_length" ? r.input_tokens : r.output_tokens) = v;
        (key == "input_length" ? has_input : has_output) = true;
      } else if (key == "hash_ids") {
        if (c.peek() != '[') value_error(c.scalar(), "an array of block hashes");
        ++c.i;
        r.prefix_hashes.clear();
        c.skip_ws();
        if (c.peek() == ']') {
          ++c.i;
        } else {
          for (;;) {
            const std::size_t at = c.column();
            const std::string_view item = c.scalar();
            std::uint64_t h = 0;
            if (!parse_u64(item, h))
              bad_row("column " + std::to_string(at) + " (hash_ids): expected a non-negative integer, got '" +
                      std::string(item) + "'");
            r.prefix_hashes.push_back(h);
            c.skip_ws();
            if (c.peek() == ']') {
              ++c.i;
              break;
            }
            if (c.peek() != ',') expected("',' or ']' in hash_ids");
            ++c.i;
            c.skip_ws();
          }
        }
        has_hashes = true;
      } else if (!c.skip_value()) {
        expected("a complete value for key \"" + std::string(key) + "\"");
      }
      c.skip_ws();
      if (c.peek() == '}') {
        ++c.i;
        break;
      }
      if (c.peek() != ',') expected("',' or '}'");
      ++c.i;
      c.skip_ws();
    }
  }
  c.skip_ws();
  if (!c.done()) expected("the end of the line after the JSON object");
  if (!has_time) bad_row("missing key \"timestamp\"");
  if (!has_input) bad_row("missing key \"input_length\"");
  if (!has_output) bad_row("missing key \"output_length\"");
  if (has_hashes) {
    const auto blocks = static_cast<std::size_t>((r.input_tokens + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens);
    if (r.prefix_hashes.size() != blocks)
      bad_row("hash_ids has " + std::to_string(r.prefix_hashes.size()) + " entries but input_length " +
              std::to_string(r.input_tokens) + " needs " + std::to_string(blocks) + " (one per " +
              std::to_string(kMooncakeBlockTokens) + "-token block)");
    r.prefix_block_tokens = kMooncakeBlockTokens;
  }
}

}  // namespace headroom::workload
