// headroom report DIR: rebuilds report.html from the outputs a command saved in DIR (headroom run's
// summary.json and CSVs, replay -o's replay.json, compare's comparison.json, tune's tune.json),
// optionally with the charts as images.
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "sim/cli/commands.hpp"
#include "sim/cli/output_folder.hpp"
#include "sim/report/chart_images.hpp"
#include "sim/report/report_folder.hpp"

namespace headroom::cli {

namespace {

struct ReportArgs {
  std::string dir;
  bool png = false;
  bool svg = false;
};

void run_report(const ReportArgs& a) {
  if (a.png) report::require_chart_renderer("png");
  if (a.svg) report::require_chart_renderer("svg");
  // Locked like the commands that write the folder: no report of a folder half rewritten by a run.
  std::unique_ptr<OutputFolderLock> lock;
  std::error_code ec;
  if (std::filesystem::is_directory(a.dir, ec)) lock = lock_output_folder(a.dir);
  const report::FolderReport r = report::write_folder_report(a.dir, a.png, a.svg);
  fmt::print("{}\n", r.html.string());
  for (const auto& p : r.images) fmt::print("{}\n", p.string());
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "Write report.html (and chart images) from a command's saved outputs");
  cmd->add_option("dir", args->dir, "Output folder of headroom run, replay -o, compare or tune")->required();
  cmd->add_flag("--png", args->png, "Also render the charts to PNG files beside report.html (headless Chromium)");
  cmd->add_flag("--svg", args->svg, "Also render the charts to SVG files beside report.html (headless Chromium)");
  cmd->callback([args] { run_report(*args); });
}

}  // namespace headroom::cli
