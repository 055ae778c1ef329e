// The data a report.html carries (its <script id="headroom-data"> JSON), for the report tests.
#pragma once

#include <string>

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

}  // namespace headroom::test
