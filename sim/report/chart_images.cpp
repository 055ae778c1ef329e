#include "sim/report/chart_images.hpp"

#include <cerrno>
#include <cstdlib>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "sim/core/error.hpp"

extern char** environ;

namespace headroom::report {

namespace {

namespace fs = std::filesystem;

fs::path find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t colon = dirs.find(':', start);
    fs::path candidate = fs::path(dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start)) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return {};
}

fs::path web_dir() {
  if (const char* env = std::getenv("HEADROOM_WEB_DIR")) return env;
  return HEADROOM_WEB_DIR;
}

// The chart images need these; each missing piece is an error saying how to get it.
void check_tools(const fs::path& node, const fs::path& web, const std::string& flag) {
  if (node.empty())
    throw InputError(flag + ": node is not on PATH; the charts are rendered by web/render_charts.mjs in headless "
                            "Chromium (apt-get install nodejs npm chromium, then npm ci in web/)");
  if (!fs::exists(web / "render_charts.mjs") || !fs::exists(web / "node_modules" / "playwright-core"))
    throw InputError(flag + ": " + (web / "node_modules" / "playwright-core").string() +
                     " is missing; run `npm ci` in " + web.string() + " (or set HEADROOM_WEB_DIR to the web/ folder)");
  const char* chromium_env = std::getenv("HEADROOM_CHROMIUM");
  const fs::path chromium = chromium_env ? chromium_env : "/usr/bin/chromium";
  if (!fs::exists(chromium))
    throw InputError(flag + ": " + chromium.string() +
                     " not found; install Debian's chromium (apt-get install chromium) or set HEADROOM_CHROMIUM");
}

}  // namespace

void require_chart_renderer(const std::string& format) { check_tools(find_on_path("node"), web_dir(), "--" + format); }

std::vector<fs::path> render_chart_images(const fs::path& report_html, const nlohmann::json& page,
                                          const std::string& format) {
  const std::string flag = "--" + format;
  const fs::path node = find_on_path("node");
  const fs::path web = web_dir();
  check_tools(node, web, flag);
  const fs::path out_dir = report_html.parent_path().empty() ? fs::path(".") : report_html.parent_path();
  std::vector<fs::path> images;
  for (const auto& v : page.at("views"))
    if (v.at("type") != "table") images.push_back(out_dir / (v.at("id").get<std::string>() + "." + format));
  std::error_code ec;
  for (const auto& p : images) fs::remove(p, ec);  // an image left from an earlier run must not pass for a new one

  // No shell: the paths go to node as they are. Its stdout (the written paths) goes to our stderr so
  // that --json output on stdout stays one JSON object.
  const std::string script = (web / "render_charts.mjs").string();
  std::vector<std::string> args = {node.string(), script, report_html.string(), out_dir.string(), format};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, node.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw InputError(fmt::format("{}: cannot start {}", flag, node.string()));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw InputError(fmt::format("{}: lost the chart renderer ({})", flag, node.string()));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw InputError(fmt::format("{}: rendering the charts of {} in headless Chromium failed (see the message above)",
                                 flag, report_html.string()));
  for (const auto& p : images)
    if (!fs::exists(p)) throw InputError(fmt::format("{}: the renderer did not write {}", flag, p.string()));
  return images;
}

}  // namespace headroom::report
