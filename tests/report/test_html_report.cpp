// report.html's pieces without a browser: the data escaping that keeps user strings out of markup,
// the page shell, the embedded scripts, and the bounded chart series (the browser test is
// tests/report/check_reports_in_browser.mjs).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/report/chart_series.hpp"
#include "sim/report/csv_columns.hpp"
#include "sim/report/embedded_web.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/replay_report_page.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom::report;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

TEST_CASE("json_for_script escapes what could end or change the script element") {
  nlohmann::json j = {{"name", "</script><script>alert(1)</script> & <!-- \xE2\x80\xA8\xE2\x80\xA9"}};
  CHECK(json_for_script(j) ==
        "{\"name\":\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e \\u0026 \\u003c!-- "
        "\\u2028\\u2029\"}");
  // The escapes mean the same characters: the data reads back unchanged.
  CHECK(nlohmann::json::parse(json_for_script(j)) == j);
}

TEST_CASE("the page carries the data once, escaped, after a fixed shell") {
  const std::string name = "<script>window.x=1</script>";
  nlohmann::json page = {{"kind", "run"}, {"title", name}, {"header", {{"verdict", name}}}, {"views", nlohmann::json::array()}};
  const std::string html = html_report(page);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(count(html, name) == 0);
  CHECK(count(html, "\\u003cscript\\u003ewindow.x=1") == 2);
  // Three script elements (the data, ECharts, report.js), each closed once.
  CHECK(count(lower(html), "<script") == 3);
  CHECK(count(lower(html), "</script") == 3);
  CHECK(count(html, "default-src 'none'") == 1);  // the page may not load anything
  const std::string open = "<script type=\"application/json\" id=\"headroom-data\">";
  const std::size_t begin = html.find(open) + open.size();
  CHECK(nlohmann::json::parse(html.substr(begin, html.find("</script>", begin) - begin)) == page);
}

TEST_CASE("the embedded scripts are the pinned ECharts and the project's own, safe inside script elements") {
  const std::string echarts(embedded::echarts_js());
  CHECK(echarts.size() > 500000);
  std::ifstream pkg(std::string(HEADROOM_SOURCE_DIR) + "/web/package.json");
  const nlohmann::json package = nlohmann::json::parse(pkg);
  const std::string version = package["dependencies"]["echarts"];
  CHECK(count(echarts, "t.version=\"" + version + "\"") == 1);  // echarts.version, as the minified bundle sets it
  for (std::string_view js : {embedded::echarts_js(), embedded::report_js(), embedded::report_css()}) {
    CHECK(count(lower(js), "</script") == 0);
    CHECK(count(std::string(js), "<!--") == 0);
  }
  CHECK(count(std::string(embedded::report_js()), "innerHTML") == 0);
}

TEST_CASE("a CDF keeps every value up to its bound, then evenly spaced ranks with both ends") {
  nlohmann::json small = cdf_points({3, 1, 2, std::nan("")}, 10);
  CHECK(small["x"] == nlohmann::json({1.0, 2.0, 3.0}));
  CHECK(small["p"][0].get<double>() == Approx(1.0 / 3));
  CHECK(small["p"][2].get<double>() == 1.0);
  std::vector<double> v;
  for (int i = 10; i >= 1; --i) v.push_back(i);
  nlohmann::json big = cdf_points(v, 4);  // ranks 0, 3, 6, 9 of 1..10
  CHECK(big["x"] == nlohmann::json({1.0, 4.0, 7.0, 10.0}));
  CHECK(big["p"] == nlohmann::json({0.1, 0.4, 0.7, 1.0}));
  CHECK(cdf_points({}, 4)["x"].empty());
}

TEST_CASE("a series of one repeated value is written as a constant") {
  CHECK(named_series("weights", {5, 5, 5}) == nlohmann::json({{"name", "weights"}, {"constant", 5.0}}));
  CHECK(named_series("kv", {5, 6}) == nlohmann::json({{"name", "kv"}, {"values", {5.0, 6.0}}}));
  CHECK(named_series("gap", {std::nan(""), 1})["values"] == nlohmann::json({nullptr, 1.0}));
}

TEST_CASE("CSV columns read back with errors naming the file, line and column") {
  auto dir = headroom::test::temp_dir("csv-columns");
  {
    std::ofstream(dir / "ok.csv") << "a,b\n1,2.5\n3,\n";
    std::ofstream(dir / "bad.csv") << "a,b\n1,2\n3,x\n";
    std::ofstream(dir / "short.csv") << "a,b\n1\n";
  }
  CsvColumns c = read_csv_columns(dir / "ok.csv");
  CHECK(c.rows() == 2);
  CHECK(c.column("b")[0] == 2.5);
  CHECK(std::isnan(c.column("b")[1]));
  CHECK_THROWS_WITH(c.column("zz"), Catch::Contains("ok.csv: no column 'zz'"));
  CHECK_THROWS_WITH(read_csv_columns(dir / "bad.csv"),
                    Catch::Contains("bad.csv:3: column 2 (b): expected a finite number, got 'x'"));
  CHECK_THROWS_WITH(read_csv_columns(dir / "short.csv"), Catch::Contains("short.csv:2: expected 2 cells, got 1"));
}

TEST_CASE("the replay verdict says how faithful the replay was and what the best what-if changes") {
  nlohmann::json r = {{"allocations", 1721}, {"address_matches", 1721}, {"final_state_matches", true}};
  CHECK(replay_verdict(r) ==
        "The model replays 1721 allocations, 1721 (100.00%) at the recorded address; its final state equals the "
        "snapshot's segments.");
  r["what_if"] = {{{"config", ""}, {"peak_reserved_bytes", 2LL << 30}},
                  {{"config", "expandable_segments:True"}, {"peak_reserved_bytes", 1LL << 30}}};
  CHECK_THAT(replay_verdict(r), Catch::EndsWith("; expandable_segments:True lowers peak reserved memory from 2.00 GiB "
                                                "to 1.00 GiB."));
}
