#include "sim/report/html_report.hpp"

#include <ostream>
#include <string_view>

#include "sim/core/atomic_file.hpp"
#include "sim/report/embedded_web.hpp"

namespace headroom::report {

std::string json_for_script(const nlohmann::json& data) {
  // dump() keeps UTF-8 as is; invalid UTF-8 in a user string becomes U+FFFD instead of a throw.
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";  // LINE / PARAGRAPH SEPARATOR
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string html_report(const nlohmann::json& page) {
  std::string html;
  html.reserve(embedded::echarts_js().size() + 256 * 1024);
  // The title is set by report.js from the data (textContent), so no user string is in the markup.
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
          "style-src 'unsafe-inline'; img-src data:\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>headroom report</title>\n<style>\n";
  html += embedded::report_css();
  html += "</style>\n</head>\n<body>\n<main id=\"report\"></main>\n"
          "<script type=\"application/json\" id=\"headroom-data\">";
  html += json_for_script(page);
  html += "</script>\n<script>\n";
  html += embedded::echarts_js();
  html += "\n</script>\n<script>\n";
  html += embedded::report_js();
  html += "\n</script>\n</body>\n</html>\n";
  return html;
}

void write_html_report(const std::filesystem::path& path, const nlohmann::json& page) {
  const std::string html = html_report(page);
  write_file_atomically(path, [&](std::ostream& out) { out << html; }, true);
}

}  // namespace headroom::report
