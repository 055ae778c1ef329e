#pragma once
// report.html: one self-contained page (no network requests) that draws a report's views with
// ECharts. The page is a fixed shell, the embedded scripts (sim/report/embedded_web.hpp) and the
// report's data as JSON in <script type="application/json" id="headroom-data">; web/report.js
// reads the data and builds every element, putting user strings (scenario names, paths, messages)
// into the DOM only through textContent.
//
// The data (a "page"), as the run and replay builders make it:
//   {"kind": "run" | "replay" | "compare" | "tune",
//    "title": "...",                                   // the document's title
//    "header": {"verdict": "...", "facts": [["label", "value"], ...],
//               "details": [{"label": "...", "text": "..."}]},   // collapsible text blocks
//    "views": [{"type": "...", "title": "...", ...}, ...]}       // drawn in order; types: web/report.js
#include <filesystem>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/text_writer.hpp"

namespace headroom::report {

// The JSON text of `data`, safe inside a <script> element: `<`, `>` and `&` become \u003c, \u003e,
// \u0026 (so no `</script>` or `<!--` can end or change the element) and U+2028/U+2029 become
// \u2028/\u2029. JSON syntax has these characters only inside strings, where the escapes mean the same.
std::string json_for_script(const nlohmann::json& data);
// The same, written to `out` as it goes (no text of the whole data first): the containers and
// numbers here, strings, keys, true/false and null by nlohmann, so the bytes are dump(-1)'s.
void write_json_for_script(TextWriter& out, const nlohmann::json& data);
// A number as nlohmann's dump writes it: null when not finite, else its to_chars (Grisu2), whole
// numbers below 10^15 without it.
void write_json_double(TextWriter& out, double v);

// The whole page for `page` (schema above), streamed to `out`: the shell, the data, the scripts
// (1 MB of ECharts) go to the file as they are, never gathered into one string.
void write_html_report(std::ostream& out, const nlohmann::json& page);
// The same page as a string (tests).
std::string html_report(const nlohmann::json& page);

// Writes the page to `path` through write_file_atomically.
void write_html_report(const std::filesystem::path& path, const nlohmann::json& page);

}  // namespace headroom::report
