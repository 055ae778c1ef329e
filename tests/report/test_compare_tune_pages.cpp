// The report pages of `headroom compare` and `headroom tune` from output folders written here with the
// commands' own writers (comparison_json, write_timeline_csv) or by hand: the shape of the page, the
// one-sentence verdicts, the OOM marker on its policy's line, the shaded failing stretches of a
// frontier, labels holding markup kept as text, and damaged files named in the error. The commands
// themselves: tests/cli/test_report_command.cpp; drawing: tests/report/check_reports_in_browser.mjs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/report/chart_series.hpp"
#include "sim/report/compare_report_page.hpp"
#include "sim/report/comparison_report.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/report_folder.hpp"
#include "sim/engine/startup_result.hpp"
#include "sim/report/run_report.hpp"
#include "sim/report/tune_report_page.hpp"
#include "tests/support/report_page.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::report;
using headroom::test::view;
using headroom::test::view_ids;
using headroom::test::write;
namespace fs = std::filesystem;

namespace {

const std::string kHostile = "<script>window.__injected = 1</script>";

// A compare folder as the command writes it: the baseline OOMs while serving at 2.5 s, a policy with
// markup in its label serves cleanly with fewer KV tokens, and a third fails to start.
fs::path compare_folder() {
  const fs::path dir = test::temp_dir("compare-page");
  std::vector<ComparisonRow> rows(3);
  rows[0].label = "engine";
  rows[0].kind = "engine";
  rows[0].started = true;
  rows[0].kv_tokens = 100000;
  rows[0].ooms = 1;
  rows[0].first_oom = FirstOom{false, "serving", 2.5, "masked_logits", 594 << 20, 50 << 20, 552 << 20, 70LL << 30,
                               "CUDA out of memory. Tried to allocate 594.00 MiB."};
  rows[0].verdict = "OOM while serving at 2.5 s (masked_logits)";
  rows[0].ttft = {10, 0.1, 0.2, 0.3, 0.4, 0.5, {}};
  rows[0].tpot = {10, 0.01, 0.02, 0.03, 0.04, 0.05, {}};
  rows[1].label = kHostile;
  rows[1].kind = "profiled";
  rows[1].started = true;
  rows[1].kv_tokens = 97000;
  rows[1].verdict = "no OOM";
  rows[1].ttft = {10, 0.1, 0.2, 0.3, 0.6, 0.7, {}};
  rows[1].tpot = {10, 0.01, 0.02, 0.03, 0.05, 0.06, {}};
  rows[2].label = "auto_profile";
  rows[2].kind = "auto_profile";
  rows[2].started = false;
  rows[2].failed_stage = "KV cache";
  rows[2].failure = "no memory left for the KV cache";
  rows[2].kv_tokens = 0;
  rows[2].verdict = "start-up failed at KV cache";
  finish_comparison(rows);
  nlohmann::json j = comparison_json("spike", rows);
  j["engine"] = "SGLang";
  j["model"] = "Qwen2.5-7B";
  j["tp"] = 1;
  j["gpu"] = {{"profile", "h100-sxm-80gb"}, {"source", "datasheet"}, {"capacity_bytes", 85028896768LL}};
  const char* files[] = {"timeline.00.engine.csv", "timeline.01.x.csv", nullptr};
  for (int i = 0; i < 3; ++i) j["policies"][i]["timeline_csv"] = files[i] ? nlohmann::json(files[i]) : nlohmann::json(nullptr);
  write(dir / "comparison.json", j.dump(2));
  write(dir / "scenario.resolved.yaml", "name: spike\n");
  // Reserved memory: flat at 60 GiB, 70 GiB from 2 s; the OOM at 2.5 s falls after the row at 2 s.
  auto timeline = [](std::vector<std::pair<double, Bytes>> points) {
    std::vector<engine::TimelinePoint> t;
    for (auto [time, reserved] : points) t.push_back({time, reserved / 2, reserved});
    return t;
  };
  std::ofstream a(dir / files[0]), b(dir / files[1]);
  write_timeline_csv(a, engine::StartupResult{},
                     timeline({{0, 60LL << 30}, {1, 60LL << 30}, {1.5, 60LL << 30}, {2, 70LL << 30}, {3, 70LL << 30}}));
  write_timeline_csv(b, engine::StartupResult{}, timeline({{0, 50LL << 30}, {4, 55LL << 30}}));
  return dir;
}

nlohmann::json tune_json() {
  // gpu_memory_utilization over 0.90 .. 0.95: the three lowest pass, 0.93 fails, 0.94 passes again,
  // 0.95 fails to start.
  nlohmann::json t = {{"scenario", "quickstart"}, {"engine", "vLLM"}, {"model", "Llama-3.1-8B"}, {"tp", 1},
                      {"gpu", {{"profile", "h100-sxm-80gb"}, {"source", "measured"}, {"capacity_bytes", 85028896768LL}}},
                      {"knob", "gpu_memory_utilization"}, {"unit", ""}, {"range", {0.9, 0.95}},
                      {"higher_is_aggressive", true}, {"best", 0.92}, {"first_failing", 0.93}, {"monotone", false},
                      {"step", 0.01}, {"variants", {"base", "rate:1.25"}}, {"threads", 2}, {"simulations", 12},
                      {"wall_s", 1.5}, {"frontier", nlohmann::json::array()}};
  const double values[] = {0.9, 0.91, 0.92, 0.93, 0.94, 0.95};
  for (int i = 0; i < 6; ++i) {
    const bool fails = i == 3 || i == 5;
    t["frontier"].push_back({{"value", values[i]}, {"started", i != 5}, {"kv_tokens", i == 5 ? 0 : 400000 + 10000 * i},
                             {"oom", fails}, {"failed_variant", fails ? "rate:1.25" : ""},
                             {"failure", i == 3 ? "OOM at 12.0 s allocating logits" : i == 5 ? "start-up failed at KV cache: no memory" : ""},
                             // A failed value has no latency (headroom writes null, never 0).
                             {"ttft_p99_s", fails ? nlohmann::json(nullptr) : nlohmann::json(0.5 + 0.1 * i)},
                             {"tpot_p99_s", fails ? nlohmann::json(nullptr) : nlohmann::json(0.02)}, {"preemptions", 0}});
  }
  return t;
}

}  // namespace

TEST_CASE("compare page: one row per policy, KV tokens by outcome, latency and the reserved memory overlay") {
  const fs::path dir = compare_folder();
  const nlohmann::json page = compare_report_page(dir);
  CHECK(page["kind"] == "compare");
  CHECK(page["title"] == "headroom compare: spike");
  CHECK(view_ids(page) == std::vector<std::string>{"policies", "kv-tokens", "latency", "memory"});
  CHECK(page["header"]["verdict"] ==
        "1 of 3 policies serve the workload without running out of memory (engine: OOM while serving at 2.5 s "
        "(masked_logits)); " + kHostile + ", the one that does, keeps 97000 KV tokens, 3.0% fewer than engine's 100000.");
  CHECK(page["header"]["facts"][3] == nlohmann::json({"GPU profile", "h100-sxm-80gb (datasheet; 79.19 GiB visible)"}));
  CHECK(page["header"]["facts"][4] ==
        nlohmann::json({"policies", "3: 1 without an OOM, 1 out of memory while serving, 1 failed to start"}));

  const nlohmann::json& table = view(page, "policies");
  REQUIRE(table["rows"].size() == 3);
  CHECK(table["rows"][1][0] == kHostile);  // the label as data, verbatim
  CHECK(table["rows"][2][1] == "failed at KV cache");
  CHECK(table["rows"][0][9] == "0.400 s");  // TTFT p99

  // One bar per policy: its value in the series of its outcome, null in the other.
  const nlohmann::json& kv = view(page, "kv-tokens");
  CHECK(kv["series"][0]["values"] == nlohmann::json({nullptr, 97000, nullptr}));
  CHECK(kv["series"][1]["values"] == nlohmann::json({100000, nullptr, 0}));
  const nlohmann::json& latency = view(page, "latency");
  const nlohmann::json& tpot = latency["series"][1]["values"];  // TPOT p99 in ms
  CHECK(tpot[0].get<double>() == Approx(40.0));
  CHECK(tpot[1].get<double>() == Approx(50.0));
  CHECK(tpot[2].is_null());

  // Started policies only; flat stretches keep their ends; the OOM sits on the reserved line at 2.5 s.
  const nlohmann::json& memory = view(page, "memory");
  REQUIRE(memory["series"].size() == 2);
  const double gib = 1024.0 * 1024 * 1024;
  CHECK(memory["series"][0]["points"] ==
        nlohmann::json({{0.0, 60 * gib}, {1.5, 60 * gib}, {2.0, 70 * gib}, {3.0, 70 * gib}}));
  REQUIRE(memory["events"].size() == 1);
  CHECK(memory["events"][0]["x"] == 2.5);
  CHECK(memory["events"][0]["y"] == 70 * gib);
  CHECK(memory["events"][0]["message"] == "CUDA out of memory. Tried to allocate 594.00 MiB.");
  CHECK(memory["lines"][0]["constant"] == 85028896768.0);

  // The label reaches report.html only escaped.
  const std::string html = html_report(page);
  CHECK(html.find(kHostile) == std::string::npos);
  CHECK(html.find("\\u003cscript\\u003ewindow.__injected = 1\\u003c/script\\u003e") != std::string::npos);
  // folder_report_page picks the compare builder by comparison.json.
  CHECK(folder_report_page(dir) == page);
}

TEST_CASE("compare verdict when every policy survives, and when none does") {
  nlohmann::json c = {{"policies", nlohmann::json::array()}};
  auto row = [](const std::string& label, bool started, bool oom, std::int64_t kv, double given_up) {
    return nlohmann::json{{"label", label}, {"kind", label}, {"verdict", oom ? "start-up OOM at KV cache" : "no OOM"},
                          {"started", started}, {"attempts", 1}, {"kv_tokens", kv}, {"kv_given_up", given_up},
                          {"ooms", oom ? 1 : 0}, {"ooms_avoided", 0},
                          {"startup_failure", started ? nlohmann::json(nullptr) : nlohmann::json{{"stage", "KV cache"}}},
                          {"first_oom", oom ? nlohmann::json{{"time_s", 0}, {"tensor", ""}, {"message", "m"}} : nlohmann::json(nullptr)},
                          {"preemptions", 0}, {"ttft_s", {{"count", 0}, {"p50", 0}, {"p99", 0}}},
                          {"tpot_s", {{"count", 0}, {"p50", 0}, {"p99", 0}}}, {"throughput_tokens_per_s", 0},
                          {"timeline_csv", "t.csv"}};
  };
  c["policies"] = {row("engine", true, false, 100, 0), row("profiled", true, false, 90, 0.1)};
  CHECK(compare_verdict(c, "c.json") ==
        "All 2 policies serve the workload without running out of memory; of those, engine keeps the most KV tokens: 100.");
  c["policies"] = {row("engine", false, true, 100, 0), row("profiled", false, true, 90, 0.1)};
  CHECK(compare_verdict(c, "c.json") ==
        "Each of the 2 policies runs out of memory or fails to start; engine: start-up OOM at KV cache.");
}

TEST_CASE("compare page: a damaged comparison.json or a timeline outside the folder is an input error") {
  const fs::path dir = compare_folder();
  nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "comparison.json"));
  j["policies"][0]["timeline_csv"] = "../../etc/passwd";
  write(dir / "comparison.json", j.dump());
  CHECK_THROWS_WITH(compare_report_page(dir),
                    Catch::Contains("comparison.json: field /policies/0/timeline_csv: expected a file name in this folder"));
  j["policies"][0]["timeline_csv"] = "timeline.00.engine.csv";
  j["policies"][1].erase("kv_tokens");
  write(dir / "comparison.json", j.dump());
  CHECK_THROWS_WITH(compare_report_page(dir), Catch::Contains("field /policies/1/kv_tokens: missing or of the wrong type"));
  write(dir / "comparison.json", "{\"policies\": [");
  CHECK_THROWS_AS(compare_report_page(dir), InputError);
  CHECK_THROWS_WITH(compare_report_page(dir), Catch::Contains("comparison.json: not valid JSON"));
}

TEST_CASE("tune frontier: failing stretches shaded half a step around each run of failing values") {
  const std::vector<double> v = {0.9, 0.91, 0.92, 0.93, 0.94, 0.95};
  const auto r = failing_regions(v, {false, false, false, true, false, true}, 0.01);
  REQUIRE(r.size() == 2);
  CHECK(r[0].first == Approx(0.925));
  CHECK(r[0].second == Approx(0.935));
  CHECK(r[1].first == Approx(0.945));
  CHECK(r[1].second == Approx(0.95));  // clipped to the grid's end
  const auto all = failing_regions(v, std::vector<bool>(6, true), 0.01);
  REQUIRE(all.size() == 1);
  CHECK(all[0] == std::pair{0.9, 0.95});
  CHECK(failing_regions(v, std::vector<bool>(6, false), 0.01).empty());
}

TEST_CASE("tune page: the frontier with the best value, every point in a table, the verdict in one sentence") {
  const fs::path dir = test::temp_dir("tune-page");
  write(dir / "tune.json", tune_json().dump(2));
  write(dir / "scenario.resolved.yaml", "name: quickstart\n");
  const nlohmann::json page = folder_report_page(dir);
  CHECK(page["kind"] == "tune");
  CHECK(view_ids(page) == std::vector<std::string>{"frontier", "frontier-table"});
  CHECK(page["header"]["verdict"] ==
        "gpu_memory_utilization = 0.92 is the largest value that never runs out of memory (420000 KV tokens); 0.93 "
        "fails (rate:1.25: OOM at 12.0 s allocating logits).");
  CHECK(page["header"]["facts"][3] == nlohmann::json({"GPU profile", "h100-sxm-80gb (measured; 79.19 GiB visible)"}));
  CHECK(page["header"]["facts"][6] == nlohmann::json({"frontier", "not monotone: a value beyond the first failure passed"}));
  const nlohmann::json& f = view(page, "frontier");
  CHECK(f["best"] == 0.92);
  CHECK(f["kv_tokens"].back().is_null());   // 0.95 did not start
  CHECK(f["ttft_p99_s"] == nlohmann::json({0.5, 0.6, 0.7, nullptr, 0.9, nullptr}));  // failed values: gaps
  CHECK(f["failed"] == nlohmann::json({false, false, false, true, false, true}));
  CHECK(f["regions"].size() == 2);
  const nlohmann::json& t = view(page, "frontier-table");
  CHECK(t["rows"][2][0] == "0.92 (best)");
  CHECK(t["rows"][5][1] == "—");
  CHECK(t["rows"][3][3] == "—");  // 0.93 failed: no TTFT p99
  CHECK(t["rows"][2][3] == "0.700 s");
  CHECK(t["rows"][3][6] == "rate:1.25: OOM at 12.0 s allocating logits");

  nlohmann::json none = tune_json();
  none["best"] = nullptr;
  none["first_failing"] = nullptr;
  CHECK(tune_verdict(none, "tune.json") ==
        "Every value of gpu_memory_utilization from 0.9 to 0.95 runs out of memory or fails to start; widen the range.");
  nlohmann::json descending = tune_json();
  std::swap(descending["frontier"][0], descending["frontier"][1]);
  CHECK_THROWS_WITH(tune_verdict(descending, "tune.json"),
                    Catch::Contains("tune.json: field /frontier/1/value: the frontier's values must ascend"));
}

TEST_CASE("xy points keep the ends of flat runs and skip missing values") {
  CHECK(xy_points({0, 1, 2, 3, 4}, {5, 5, 5, 6, 6}) == nlohmann::json({{0.0, 5.0}, {2.0, 5.0}, {3.0, 6.0}, {4.0, 6.0}}));
  CHECK(xy_points({0, 1, 2}, {1, std::nan(""), 1}) == nlohmann::json({{0.0, 1.0}, {2.0, 1.0}}));
  CHECK(xy_points({}, {}).empty());
}
