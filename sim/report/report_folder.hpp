#pragma once
// report.html for an output folder: which command wrote the folder is told by the file it left
// (summary.json: run, replay.json: replay, comparison.json: compare, tune.json: tune), and that
// command's page builder draws it from the saved files. Those commands and `headroom report DIR` all
// go through here, so a report rebuilt later is byte-identical to the one the command wrote.
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::report {

// The page for `dir`; InputError when the folder holds no known command's outputs.
nlohmann::json folder_report_page(const std::filesystem::path& dir);

struct FolderReport {
  std::filesystem::path html;                 // dir/report.html
  std::vector<std::filesystem::path> images;  // with png/svg: one file per chart, beside it
};

// Writes dir/report.html and, when asked, the charts as PNG and/or SVG files beside it.
FolderReport write_folder_report(const std::filesystem::path& dir, bool png = false, bool svg = false);

}  // namespace headroom::report
