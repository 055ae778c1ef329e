#pragma once
// --png / --svg: the charts of a report.html rendered to image files by the same page in headless
// Chromium (web/render_charts.mjs through node and playwright-core), for papers and pull requests.
// Needs node, web/node_modules (`npm ci` in web/) and Chromium ($HEADROOM_CHROMIUM, default
// /usr/bin/chromium from Debian's `chromium` package); each missing piece is an error naming it.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::report {

// Throws InputError naming what is missing (node, web/node_modules, Chromium) for --<format>, so a
// command can refuse before it does its work.
void require_chart_renderer(const std::string& format);

// Writes <view id>.<format> next to `report_html` for every chart view of `page` (the data the page
// was written from) and returns their paths. `format` is "png" or "svg".
std::vector<std::filesystem::path> render_chart_images(const std::filesystem::path& report_html,
                                                       const nlohmann::json& page, const std::string& format);

}  // namespace headroom::report
