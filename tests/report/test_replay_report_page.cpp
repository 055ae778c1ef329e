// The replay report's page from saved outputs: a segment map beyond its block bound merges
// neighbours of one state (the colours stay), and a state-only snapshot draws its final map alone.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "sim/report/replay_report_page.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom::report;
namespace fs = std::filesystem;

namespace {

// A replay output folder with no trace (state only) whose final map is `segments`.
fs::path folder(const std::string& tag, const nlohmann::json& segments) {
  fs::path dir = headroom::test::temp_dir(tag);
  std::ofstream(dir / "replay.json") << nlohmann::json({{"snapshot", "s.pickle"}, {"config", ""}, {"allocations", 0},
                                                        {"peak_allocated_bytes", 0}, {"peak_reserved_bytes", 0},
                                                        {"final_allocated_bytes", 0}, {"final_reserved_bytes", 0}});
  std::ofstream(dir / "timeline.csv") << "event_index,time_us,allocated_bytes,reserved_bytes,"
                                         "reserved_unallocated_bytes,largest_free_block_bytes,free_blocks\n";
  std::ofstream(dir / "segments.json") << nlohmann::json(
      {{"at_peak_reserved", {{"event_index", 0}, {"segments", nlohmann::json::array()}}},
       {"final", {{"event_index", 0}, {"segments", segments}}}});
  return dir;
}

}  // namespace

TEST_CASE("a segment map beyond its block bound draws neighbours of one state as one block") {
  // 2 × (kSegmentMapBlocks / 2 + 1) blocks of 512 B in pairs of one state: allocated, allocated, free, free, ...
  const std::size_t pairs = kSegmentMapBlocks / 2 + 1;
  nlohmann::json blocks = nlohmann::json::array();
  for (std::size_t i = 0; i < 2 * pairs; ++i) blocks.push_back({i * 512, 512, 500, (i / 2) % 2 ? 2 : 0});
  nlohmann::json segment = {{"address", 1 << 20}, {"total_size", 2 * pairs * 512}, {"stream", 0}, {"pool", "large"},
                            {"pool_id", {0, 0}}, {"expandable", false}, {"blocks", blocks}};
  nlohmann::json page = replay_report_page(folder("segmap-merge", nlohmann::json::array({segment})));
  REQUIRE(page["views"].size() == 1);  // state only: no trace to chart, no map at a peak
  const nlohmann::json& map = page["views"][0];
  CHECK(map["id"] == "segments-final");
  CHECK(map["merged"] == true);
  const nlohmann::json& drawn = map["segments"][0]["blocks"];
  REQUIRE(drawn.size() == pairs);
  CHECK(drawn[0] == nlohmann::json({0, 1024, 1000, 0, 2}));
  CHECK(drawn[1] == nlohmann::json({1024, 1024, 1000, 2, 2}));
  CHECK(page["header"]["verdict"] == "The snapshot holds no allocations to replay (its state only).");
}

TEST_CASE("a segment map within its bound keeps every block") {
  nlohmann::json segment = {{"address", 4096}, {"total_size", 2048}, {"stream", 0}, {"pool", "small"},
                            {"pool_id", {0, 0}}, {"expandable", false},
                            {"blocks", {{0, 1024, 1000, 0}, {1024, 1024, 0, 2}}}};
  nlohmann::json map = replay_report_page(folder("segmap-keep", nlohmann::json::array({segment})))["views"][0];
  CHECK(map["merged"] == false);
  CHECK(map["segments"][0]["blocks"] == nlohmann::json({{0, 1024, 1000, 0, 1}, {1024, 1024, 0, 2, 1}}));
}
