#pragma once
// `headroom sweep GRID.yaml`: a base scenario and axes whose cross product is the grid of points
// (docs/sweep.md). Every point is built and validated when the grid is loaded, so a bad axis value
// fails with the grid's file:line before anything runs. Each point has a stable id: a hash of the
// base scenario's text and the point's coordinates, so a resumed sweep recognises finished points
// whatever their position in an edited grid; and an inputs key, a hash of the bytes of every file the
// point reads (GPU profile, config.json, trace, lengths file), so that a file changed between two
// runs of the sweep has its points run again rather than mixed with results of the old one.
#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace headroom::scenario {

// The axis names a grid accepts besides tune's knobs (gpu_memory_utilization, policy.k, ...).
std::vector<std::string> sweep_axis_names();

struct SweepPoint {
  std::size_t index = 0;  // position in grid order (the first axis varies slowest)
  std::string id;         // 16 hex digits: FNV-1a of the base's text and the coordinates
  std::string inputs;     // 16 hex digits: FNV-1a of the point's input files' contents (see above)
  std::vector<std::pair<std::string, std::string>> coordinates;  // (axis, value as written), axis order
  Scenario scenario;      // the base with this point's values applied; `scenario.policy` is the policy
};

struct SweepGrid {
  std::string file;
  std::string name;     // `name:`, default the grid file's stem
  std::string name_at;  // "<file>:<line>:<col>: key 'name'" where it is given; "" for the stem
  std::vector<std::string> axes;
  std::vector<SweepPoint> points;
};

// Reads GRID.yaml and builds every point; InputError naming file:line:col and the key on bad input.
SweepGrid load_sweep_grid(const std::filesystem::path& path);

}  // namespace headroom::scenario
