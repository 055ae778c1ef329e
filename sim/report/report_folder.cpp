#include "sim/report/report_folder.hpp"

#include <utility>

#include "sim/core/error.hpp"
#include "sim/report/chart_images.hpp"
#include "sim/report/compare_report_page.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/replay_report_page.hpp"
#include "sim/report/run_report_page.hpp"
#include "sim/report/tune_report_page.hpp"

namespace headroom::report {

nlohmann::json folder_report_page(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw InputError(dir.string() + ": not a folder");
  if (fs::exists(dir / "summary.json")) return run_report_page(dir);
  if (fs::exists(dir / "replay.json")) return replay_report_page(dir);
  if (fs::exists(dir / "comparison.json")) return compare_report_page(dir);
  if (fs::exists(dir / "tune.json")) return tune_report_page(dir);
  throw InputError(dir.string() + ": holds none of summary.json (written by headroom run), replay.json "
                                  "(headroom replay -o DIR), comparison.json (headroom compare) or tune.json "
                                  "(headroom tune)");
}

FolderReport write_folder_report(const std::filesystem::path& dir, bool png, bool svg) {
  FolderReport r;
  r.html = dir / "report.html";
  const nlohmann::json page = folder_report_page(dir);
  write_html_report(r.html, page);
  for (const auto& [wanted, format] : {std::pair{png, "png"}, std::pair{svg, "svg"}}) {
    if (!wanted) continue;
    for (auto& p : render_chart_images(r.html, page, format)) r.images.push_back(std::move(p));
  }
  return r;
}

}  // namespace headroom::report
