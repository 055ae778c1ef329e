// The data a report.html carries (its <script id="headroom-data"> JSON) and its views, for the report tests.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace headroom::test {

inline nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"headroom-data\">";
  const std::size_t begin = html.find(open);
  REQUIRE(begin != std::string::npos);
  const std::size_t from = begin + open.size();
  return nlohmann::json::parse(html.substr(from, html.find("</script>", from) - from));
}

// The ids of the page's views, in the order the page draws them.
inline std::vector<std::string> view_ids(const nlohmann::json& page) {
  std::vector<std::string> ids;
  for (const auto& v : page["views"]) ids.push_back(v["id"]);
  return ids;
}

// The page's view with this id; fails the test when there is none.
inline const nlohmann::json& view(const nlohmann::json& page, const std::string& id) {
  for (const auto& v : page["views"])
    if (v["id"] == id) return v;
  FAIL("no view " << id);
  throw;
}

}  // namespace headroom::test
