#pragma once
// Limits on what headroom reads whole into memory (docs/limits.md says why each is where it is).
// Every reader checks its input against these before it holds more, so that a hostile or mistaken
// file ends in an InputError naming the file and the limit, never in std::bad_alloc.
#include <cstddef>
#include <cstdint>

namespace headroom::limits {

// Scenario, sweep grid, policy list, GPU profile, config.json, measurement CSV, step description:
// the largest real one is a few KB, so 16 MiB leaves three orders of magnitude and bounds the text.
inline constexpr std::uint64_t kMaxTextFileBytes = std::uint64_t{16} << 20;

// yaml-cpp spends ~300 bytes per node: 100,000 nodes hold ~30 MB. A scenario has ~50, the
// largest sweep grid or policy list a few thousand.
inline constexpr std::size_t kMaxYamlNodes = 100'000;
// Our YAML files nest at most 5 levels; yaml-cpp's own guard (2,000) costs stack on the way.
inline constexpr int kMaxYamlDepth = 64;

// config.json and step descriptions: a few hundred values, nested 3 levels.
inline constexpr std::size_t kMaxJsonValues = 100'000;
inline constexpr int kMaxJsonDepth = 64;

}  // namespace headroom::limits
