// report.html from the command line: written by run, replay -o and compare (tune: in
// tests/cli/test_compare_tune.cpp), rebuilt byte for byte by
// `headroom report DIR` from the saved outputs, the engine's budget and the GPU capacity saved for
// it, and the errors (a folder without outputs, a malformed output, --png without a browser).
// Drawing in a browser: tests/report/check_reports_in_browser.mjs.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/report_page.hpp"
#include "tests/support/test_data.hpp"

using headroom::test::run_headroom;
using headroom::test::source_dir;
using headroom::test::page_data;
using headroom::test::q;
using headroom::test::slurp;
using headroom::test::write;
namespace fs = std::filesystem;

TEST_CASE("report: run writes report.html and headroom report rebuilds the same bytes") {
  fs::path out = headroom::test::temp_dir("report-run");
  REQUIRE(run_headroom("run " + q(source_dir() / "scenarios/quickstart.yaml") + " -o " + q(out)).exit_code == 0);
  const std::string written = slurp(out / "report.html");
  fs::remove(out / "report.html");
  auto r = run_headroom("report " + q(out));
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(out / "report.html") == written);

  // The budget line is vLLM's gpu_memory_utilization share of the H100's 85,028,896,768 B (README).
  auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  CHECK(summary["gpu"]["capacity_bytes"] == 85028896768LL);
  CHECK(summary["memory_budget"]["bytes"] == static_cast<long long>(0.9 * 85028896768.0));
  CHECK(summary["memory_budget"]["rule"] == "gpu_memory_utilization 0.9 × capacity");
  nlohmann::json page = page_data(written);
  CHECK(page["kind"] == "run");
  CHECK(page["header"]["verdict"] == summary["verdict"]["text"]);
  // headroom, memory, kv, fragmentation, load, and the three latency CDFs.
  REQUIRE(page["views"].size() == 8);
  CHECK(page["views"][0]["id"] == "headroom");
  CHECK(page["views"][2]["id"] == "kv");
  const nlohmann::json& memory = page["views"][1];
  CHECK(memory["id"] == "memory");
  CHECK(memory["x"].size() == 4000);  // the timeline's bound (2,000 buckets, min and max)
  CHECK(memory["lines"][0] == nlohmann::json({{"name", "capacity"}, {"constant", 85028896768.0}}));
  CHECK(memory["areas"][1] == nlohmann::json({{"name", "weights"}, {"constant", summary["startup"]["bytes"]["weights"].get<double>()}}));
  // Each latency CDF ends at the slowest request summary.json reports.
  CHECK(page["views"][5]["id"] == "ttft");
  CHECK(page["views"][5]["series"][0]["x"].back().get<double>() == Approx(summary["metrics"]["ttft_s"]["max"].get<double>()).epsilon(1e-5));
  CHECK(page["views"][5]["series"][0]["x"].size() == 500);
}

TEST_CASE("report: replay -o saves its results and the report, rebuilt byte for byte") {
  fs::path dir = headroom::test::temp_dir("report-replay");
  REQUIRE(run_headroom("sample-snapshot -o " + q(dir / "s.pickle")).exit_code == 0);
  auto r = run_headroom("replay " + q(dir / "s.pickle") + " -o " + q(dir / "out") +
                        " --what-if expandable_segments:True --capacity 4GiB");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("replay.json, timeline.csv, segments.json, what_if_timeline.csv, report.html"));
  auto replay = nlohmann::json::parse(slurp(dir / "out/replay.json"));
  auto json = run_headroom("replay " + q(dir / "s.pickle") + " --json --what-if expandable_segments:True --capacity 4GiB");
  REQUIRE(json.exit_code == 0);
  CHECK(nlohmann::json::parse(json.output) == replay);  // replay.json is what --json prints
  const std::string written = slurp(dir / "out/report.html");
  REQUIRE(run_headroom("report " + q(dir / "out")).exit_code == 0);
  CHECK(slurp(dir / "out/report.html") == written);

  nlohmann::json page = page_data(written);
  CHECK(page["kind"] == "replay");
  std::vector<std::string> ids;
  for (const auto& v : page["views"]) ids.push_back(v["id"]);
  CHECK(ids == std::vector<std::string>{"memory", "fragmentation", "segments-peak", "segments-final", "what-if",
                                        "what-if-table", "what-if-reserved"});
  // The map at the peak holds the bytes reserved then: its segments add up to peak reserved.
  auto maps = nlohmann::json::parse(slurp(dir / "out/segments.json"));
  long long reserved = 0;
  for (const auto& s : maps["at_peak_reserved"]["segments"]) reserved += s["total_size"].get<long long>();
  CHECK(reserved == replay["peak_reserved_bytes"].get<long long>());
  long long final_reserved = 0;
  for (const auto& s : maps["final"]["segments"]) final_reserved += s["total_size"].get<long long>();
  CHECK(final_reserved == replay["final_reserved_bytes"].get<long long>());
}

TEST_CASE("report: compare writes one row per policy and the memory overlay, rebuilt byte for byte") {
  fs::path dir = headroom::test::temp_dir("report-compare");
  const std::string hostile = "<script>window.__injected = 1</script>";
  write(dir / "p.yaml", "- engine\n- profiled\n- {fragmentation_buffer: {label: \"" + hostile + "\"}}\n");
  const fs::path out = dir / "out";
  auto r = run_headroom("compare " + q(source_dir() / "scenarios/incident-sampler-spike.yaml") + " --policies " +
                        q(dir / "p.yaml") + " -o " + q(out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("comparison.json, a timeline per policy, scenario.resolved.yaml, report.html"));
  const std::string written = slurp(out / "report.html");
  fs::remove(out / "report.html");
  REQUIRE(run_headroom("report " + q(out)).exit_code == 0);
  CHECK(slurp(out / "report.html") == written);

  // The engine dies in the sampler spike (tests/cli/test_compare_tune.cpp); profiled and the buffer
  // survive, profiled with more KV tokens (README walk-through: 3.0% and 5.7% given up).
  nlohmann::json page = page_data(written);
  CHECK(page["kind"] == "compare");
  CHECK_THAT(page["header"]["verdict"].get<std::string>(),
             Catch::StartsWith("2 of 3 policies serve the workload without running out of memory (engine: OOM while "
                               "serving at 5.7 s (masked_logits)); of those, profiled(fraction=engine's) keeps the most KV "
                               "tokens: "));
  CHECK(page["header"]["facts"][3][1] == "h100-sxm-80gb (datasheet; 79.19 GiB visible)");
  std::vector<std::string> ids;
  for (const auto& v : page["views"]) ids.push_back(v["id"]);
  CHECK(ids == std::vector<std::string>{"policies", "kv-tokens", "latency", "memory"});
  CHECK(page["views"][0]["rows"][2][0] == hostile);
  CHECK(written.find(hostile) == std::string::npos);
  auto comparison = nlohmann::json::parse(slurp(out / "comparison.json"));
  CHECK(comparison["gpu"]["source"] == "datasheet");
  const nlohmann::json& memory = page["views"][3];
  REQUIRE(memory["series"].size() == 3);
  REQUIRE(memory["events"].size() == 1);
  CHECK(memory["events"][0]["x"] == comparison["policies"][0]["first_oom"]["time_s"]);
  CHECK(memory["events"][0]["message"] == comparison["policies"][0]["first_oom"]["message"]);
  const std::string resolved = slurp(out / "scenario.resolved.yaml");
  CHECK(resolved.find("max_running_requests: 1024") != std::string::npos);
  CHECK(resolved.find("cuda_graph_max_bs: 256") != std::string::npos);  // a default filled in

  // A corrupt comparison.json: exit 2 naming it, and no report.html.
  write(out / "comparison.json", slurp(out / "comparison.json").substr(0, 100));
  fs::remove(out / "report.html");
  auto bad = run_headroom("report " + q(out));
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Catch::Contains((out / "comparison.json").string() + ": not valid JSON"));
  CHECK_FALSE(fs::exists(out / "report.html"));
}

TEST_CASE("report: folders without outputs, malformed outputs and missing renderers are errors") {
  fs::path dir = headroom::test::temp_dir("report-bad");
  auto empty = run_headroom("report " + q(dir));
  CHECK(empty.exit_code == 2);
  CHECK_THAT(empty.output, Catch::Contains("holds none of summary.json (written by headroom run), replay.json"));

  fs::path out = dir / "run";
  REQUIRE(run_headroom("run " + q(source_dir() / "scenarios/quickstart.yaml") + " -o " + q(out)).exit_code == 0);
  write(out / "timeline.csv", slurp(out / "timeline.csv") + "1.0,x\n");
  fs::remove(out / "report.html");
  auto bad = run_headroom("report " + q(out));
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Catch::Contains("timeline.csv:4002: expected 19 cells, got 2"));
  CHECK_FALSE(fs::exists(out / "report.html"));

  auto no_dir = run_headroom("replay " + q(dir / "s.pickle") + " --png");
  CHECK(no_dir.exit_code == 2);
  CHECK_THAT(no_dir.output, Catch::Contains("--png and --svg draw the report of -o DIR; give -o DIR"));

  ::setenv("HEADROOM_CHROMIUM", "/nonexistent/chromium", 1);
  auto no_browser = run_headroom("run " + q(source_dir() / "scenarios/quickstart.yaml") + " -o " + q(dir / "png") + " --png");
  ::unsetenv("HEADROOM_CHROMIUM");
  CHECK(no_browser.exit_code == 2);
  CHECK_THAT(no_browser.output, Catch::Contains("/nonexistent/chromium not found; install Debian's chromium"));
  CHECK_FALSE(fs::exists(dir / "png/summary.json"));  // refused before simulating
}
