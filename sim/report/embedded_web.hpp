#pragma once
// The report page's scripts and style, compiled in from web/ by sim/report/web.cmake (generated
// sources), so report.html needs nothing at run time and opens offline.
#include <string_view>

namespace headroom::report::embedded {

std::string_view echarts_js();  // web/node_modules/echarts/dist/echarts.min.js (version: web/package.json)
std::string_view report_js();   // web/report.js: draws the page's views from its data
std::string_view report_css();  // web/report.css

}  // namespace headroom::report::embedded
