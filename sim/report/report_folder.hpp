#pragma once
// report.html for an output folder: which command wrote the folder is told by the file it left
// (summary.json: run, replay.json: replay, comparison.json: compare, tune.json: tune), and that
// command's page builder draws it from those files. The commands hand the builders the texts they
// are about to write (an in-memory OutputFolder) and `headroom report DIR` the saved files, through
// the same builders, so a report rebuilt later is byte-identical to the one the command wrote.
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/output_files.hpp"

namespace headroom::report {

// The page for `folder`; InputError when it holds no known command's outputs.
nlohmann::json folder_report_page(const OutputFolder& folder);

struct FolderReport {
  std::filesystem::path html;                 // dir/report.html
  std::vector<std::filesystem::path> images;  // with png/svg: one file per chart, beside it
};

// `headroom report DIR`: DIR/report.html from DIR's saved files and, when asked, the charts as PNG
// and/or SVG files beside it.
FolderReport write_folder_report(const std::filesystem::path& dir, bool png = false, bool svg = false);

// The charts of `page`, whose report.html is already written at `html`, as PNG and/or SVG files
// beside it (headless Chromium reads the page).
std::vector<std::filesystem::path> render_report_images(const std::filesystem::path& html, const nlohmann::json& page,
                                                        bool png, bool svg);

}  // namespace headroom::report
