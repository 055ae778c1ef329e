#include "sim/report/html_report.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "sim/core/atomic_file.hpp"
#include "sim/report/embedded_web.hpp"

namespace headroom::report {

namespace {

// The bytes that start an escape in json_for_script: `<`, `>`, `&`, and 0xE2, the lead byte of
// U+2028/U+2029 (E2 80 A8/A9).
constexpr std::array<bool, 256> kScriptSpecial = [] {
  std::array<bool, 256> t{};
  t['<'] = t['>'] = t['&'] = t[0xE2] = true;
  return t;
}();

void write_escaped_for_script(TextWriter& out, std::string_view text) {
  std::size_t run = 0;  // start of the bytes not yet written
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!kScriptSpecial[static_cast<unsigned char>(c)]) continue;
    const char* escape = c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : c == '&' ? "\\u0026" : nullptr;
    std::size_t skip = 1;
    if (!escape) {  // 0xE2: only LINE / PARAGRAPH SEPARATOR are escaped
      if (!(i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9'))) continue;
      escape = text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      skip = 3;
    }
    out.write(text.substr(run, i - run));
    out.write(escape);
    i += skip - 1;
    run = i + 1;
  }
  out.write(text.substr(run));
}

// A leaf nlohmann writes itself (a string, true/false, null), or an object's key as a string:
// dump() keeps UTF-8 as is, and invalid UTF-8 in a user string becomes U+FFFD instead of a throw.
void write_leaf_for_script(TextWriter& out, const nlohmann::json& leaf) {
  write_escaped_for_script(out, leaf.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// `data` as nlohmann's dump(-1) writes it, straight into the writer: containers and numbers here,
// the rest by nlohmann (write_leaf_for_script). No number needs escaping.
void write_json(TextWriter& out, const nlohmann::json& data) {
  using value_t = nlohmann::json::value_t;
  switch (data.type()) {
    case value_t::object: {
      out.put('{');
      bool first = true;
      for (const auto& [key, value] : data.get_ref<const nlohmann::json::object_t&>()) {
        if (!first) out.put(',');
        first = false;
        write_leaf_for_script(out, nlohmann::json(key));
        out.put(':');
        write_json(out, value);
      }
      out.put('}');
      return;
    }
    case value_t::array: {
      out.put('[');
      bool first = true;
      for (const nlohmann::json& value : data.get_ref<const nlohmann::json::array_t&>()) {
        if (!first) out.put(',');
        first = false;
        write_json(out, value);
      }
      out.put(']');
      return;
    }
    case value_t::number_integer:
      out.print(FMT_COMPILE("{}"), data.get_ref<const nlohmann::json::number_integer_t&>());
      return;
    case value_t::number_unsigned:
      out.print(FMT_COMPILE("{}"), data.get_ref<const nlohmann::json::number_unsigned_t&>());
      return;
    case value_t::number_float:
      write_json_double(out, data.get_ref<const nlohmann::json::number_float_t&>());
      return;
    default:
      write_leaf_for_script(out, data);
  }
}

}  // namespace

void write_json_double(TextWriter& out, double v) {
  if (!std::isfinite(v)) {
    out.write("null");
    return;
  }
  // A whole number below 10^15 (byte counts, token counts): nlohmann's Grisu2 gives exactly its
  // digits, then ".0" (its to_chars: the shortest digits within half an ulp, which for an integer
  // below 2^53 are the integer's own; printed positionally up to 15 digits), for a tenth of the cost.
  if (std::fabs(v) < 1e15 && v == std::trunc(v)) {
    if (std::signbit(v)) out.put('-');
    out.print(FMT_COMPILE("{}.0"), static_cast<std::uint64_t>(std::fabs(v)));
    return;
  }
  std::array<char, 64> buf;
  const char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.write(std::string_view(buf.data(), static_cast<std::size_t>(end - buf.data())));
}

void write_json_for_script(TextWriter& out, const nlohmann::json& data) { write_json(out, data); }

std::string json_for_script(const nlohmann::json& data) {
  TextWriter out;
  write_json_for_script(out, data);
  return out.text();
}

void write_html_report(std::ostream& stream, const nlohmann::json& page) {
  TextWriter out(stream);
  // The title is set by report.js from the data (textContent), so no user string is in the markup.
  out.write("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
            "style-src 'unsafe-inline'; img-src data:\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>headroom report</title>\n<style>\n");
  out.write(embedded::report_css());
  out.write("</style>\n</head>\n<body>\n<main id=\"report\"></main>\n"
            "<script type=\"application/json\" id=\"headroom-data\">");
  write_json_for_script(out, page);
  out.write("</script>\n<script>\n");
  out.flush();
  stream.write(embedded::echarts_js().data(), static_cast<std::streamsize>(embedded::echarts_js().size()));
  out.write("\n</script>\n<script>\n");
  out.write(embedded::report_js());
  out.write("\n</script>\n</body>\n</html>\n");
}

std::string html_report(const nlohmann::json& page) {
  std::ostringstream s;
  write_html_report(s, page);
  return s.str();
}

void write_html_report(const std::filesystem::path& path, const nlohmann::json& page) {
  write_file_atomically(path, [&](std::ostream& out) { write_html_report(out, page); }, true);
}

}  // namespace headroom::report
