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

nlohmann::json folder_report_page(const OutputFolder& folder) {
  namespace fs = std::filesystem;
  const fs::path& dir = folder.dir();
  if (folder.on_disk() && !fs::is_directory(dir)) throw InputError(dir.string() + ": not a folder");
  if (folder.has("summary.json")) return run_report_page(folder);
  if (folder.has("replay.json")) return replay_report_page(folder);
  if (folder.has("comparison.json")) return compare_report_page(folder);
  if (folder.has("tune.json")) return tune_report_page(folder);
  throw InputError(dir.string() + ": holds none of summary.json (written by headroom run), replay.json "
                                  "(headroom replay -o DIR), comparison.json (headroom compare) or tune.json "
                                  "(headroom tune)");
}

FolderReport write_folder_report(const std::filesystem::path& dir, bool png, bool svg) {
  FolderReport r;
  r.html = dir / "report.html";
  const nlohmann::json page = folder_report_page(OutputFolder(dir));
  write_html_report(r.html, page);
  r.images = render_report_images(r.html, page, png, svg);
  return r;
}

std::vector<std::filesystem::path> render_report_images(const std::filesystem::path& html, const nlohmann::json& page,
                                                        bool png, bool svg) {
  std::vector<std::filesystem::path> images;
  for (const auto& [wanted, format] : {std::pair{png, "png"}, std::pair{svg, "svg"}}) {
    if (!wanted) continue;
    for (auto& p : render_chart_images(html, page, format)) images.push_back(std::move(p));
  }
  return images;
}

}  // namespace headroom::report
