// The report page of `headroom run` from an output folder written here with the command's own
// writers (write_timeline_csv, headroom_json): the headroom line at the top, the headroom chart
// (free memory zoomed to where it moves, the budget's level, the closest call marked) and the KV-usage
// chart; a folder written before them still draws. Drawing: tests/report/check_reports_in_browser.mjs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/engine/startup_result.hpp"
#include "sim/report/output_files.hpp"
#include "sim/report/run_report.hpp"
#include "sim/report/run_report_page.hpp"
#include "tests/support/report_page.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::report;
using headroom::test::view;
using headroom::test::view_ids;
using headroom::test::write;
namespace fs = std::filesystem;

namespace {

// An 80 GiB device, 1 GiB non-torch, a 72 GiB budget; three steps, the second one's logits take free
// memory to 6 GiB with 73 GiB reserved (1 GiB over the budget).
fs::path run_folder() {
  const fs::path dir = test::temp_dir("run-page");
  engine::StartupResult st;
  st.ok = true;
  st.kv_tokens = 400000;
  st.bytes.weights = 16LL << 30;
  st.bytes.kv_cache = 50LL << 30;
  st.bytes.non_torch = 1LL << 30;
  std::vector<engine::TimelinePoint> t(3);
  const Bytes reserved[] = {72LL << 30, 73LL << 30, 73LL << 30};
  const std::int64_t kv[] = {1000, 250000, 4000};
  for (int i = 0; i < 3; ++i) {
    t[i].time_s = i;
    t[i].reserved = reserved[i];
    t[i].allocated = reserved[i] - (1LL << 30);
    t[i].device_free = (79LL << 30) - reserved[i];
    t[i].free_or_cached = t[i].device_free + (1LL << 30);
    t[i].kv_used_tokens = kv[i];
  }
  std::ofstream(dir / "timeline.csv") << [&] {
    std::ostringstream s;
    write_timeline_csv(s, st, t);
    return s.str();
  }();
  engine::ClosestCall c;
  c.min_free = 6LL << 30;
  c.reserved = 73LL << 30;
  c.time_s = 1.0;
  c.step = 1;
  c.tensor = model::Tensor::logits;
  c.bytes = 1LL << 30;
  nlohmann::json s = {{"scenario", "page"}, {"engine", "vLLM"}, {"model", "Llama-3.1-8B"},
                      {"gpu", {{"profile", "h100-sxm-80gb"}, {"source", "datasheet"}, {"capacity_bytes", 80LL << 30}}},
                      {"memory_budget", {{"bytes", 72LL << 30}, {"rule", "gpu_memory_utilization 0.9 × capacity"}}},
                      {"startup", {{"ok", true}, {"kv_tokens", 400000}, {"bytes", {{"non_torch", 1LL << 30}}}}},
                      {"requests", {{"arrived", 3}, {"completed", 3}}},
                      {"verdict", {{"text", "vLLM serves all 3 requests"}}}};
  s["headroom"] = headroom_json(c, 1LL << 30, MemoryBudget{72LL << 30, "gpu_memory_utilization 0.9 × capacity"});
  write(dir / "summary.json", s.dump(2));
  write(dir / "scenario.resolved.yaml", "name: page\n");
  return dir;
}

}  // namespace

TEST_CASE("the run page puts the headroom line on top and draws free memory and KV usage over time") {
  const fs::path dir = run_folder();
  const nlohmann::json page = run_report_page(OutputFolder(dir));
  CHECK(page["header"]["headroom"] ==
        "6.00 GiB free on the device at the lowest, at 1.000 s (step 1, allocating logits of 1.00 GiB); the process "
        "then 2.00 GiB over the memory budget");  // 72 − (1 + 73)
  CHECK(view_ids(page) == std::vector<std::string>{"headroom", "memory", "kv", "fragmentation", "load"});

  const nlohmann::json& h = view(page, "headroom");
  CHECK(h["type"] == "lines");
  CHECK(h["y_from_data"] == true);  // zoomed to where the lines move, not from 0
  CHECK(h["group"] == "time");
  REQUIRE(h["series"].size() == 3);
  CHECK(h["series"][0]["values"] == nlohmann::json({double(7LL << 30), double(6LL << 30), double(6LL << 30)}));
  CHECK(h["series"][1]["values"] == nlohmann::json({double(8LL << 30), double(7LL << 30), double(7LL << 30)}));
  // With the process at exactly its budget the device has 80 − 72 = 8 GiB free: the free memory at the
  // closest call less its distance to the budget (6 − (−2)).
  CHECK(h["series"][2]["constant"] == double(8LL << 30));
  CHECK(h["series"][2]["reference"] == true);
  REQUIRE(h["marks"].size() == 1);
  CHECK(h["marks"][0]["x"] == 1.0);
  CHECK(h["marks"][0]["y"] == double(6LL << 30));
  CHECK(h["marks"][0]["message"] == page["header"]["headroom"]);

  const nlohmann::json& kv = view(page, "kv");
  CHECK(kv["series"][0]["values"] == nlohmann::json({1000.0, 250000.0, 4000.0}));
  CHECK(kv["series"][1]["constant"] == 400000.0);
  CHECK(kv["series"][1]["reference"] == true);
}

TEST_CASE("a run folder written before the headroom figures draws without them, and a damaged one is named") {
  const fs::path dir = run_folder();
  nlohmann::json s = nlohmann::json::parse(std::ifstream(dir / "summary.json"));
  s.erase("headroom");
  write(dir / "summary.json", s.dump(2));
  nlohmann::json page = run_report_page(OutputFolder(dir));
  CHECK_FALSE(page["header"].contains("headroom"));
  CHECK(view_ids(page) == std::vector<std::string>{"memory", "kv", "fragmentation", "load"});
  // Before the verdict object (issue 16), summary.json's verdict was its text.
  s["verdict"] = "vLLM serves all 3 requests";
  write(dir / "summary.json", s.dump(2));
  CHECK(run_report_page(OutputFolder(dir))["header"]["verdict"] == "vLLM serves all 3 requests");

  s["headroom"] = {{"min_free_bytes", "six"}};
  write(dir / "summary.json", s.dump(2));
  CHECK_THROWS_AS(run_report_page(OutputFolder(dir)), InputError);
  CHECK_THROWS_WITH(run_report_page(OutputFolder(dir)),
                    Catch::Contains("summary.json: headroom: expected {min_free_bytes, at_s, step, allocation"));
}
