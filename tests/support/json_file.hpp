#pragma once
// A JSON output file (summary.json, tune.json, comparison.json) parsed, for the command-line tests.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/support/test_data.hpp"

namespace headroom::test {

inline nlohmann::json read_json(const std::filesystem::path& path) { return nlohmann::json::parse(slurp(path)); }

}  // namespace headroom::test
