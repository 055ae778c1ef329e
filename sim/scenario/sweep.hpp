#pragma once
// Running a sweep's points and gathering its table (docs/sweep.md). Each finished point is written
// atomically to <out>/points/<id>.json the moment it finishes, so a sweep killed halfway keeps every
// finished point and a restart runs only the others; results.csv and results.json gather every
// point's file in grid order, so the table is the same however the points were run (one shot,
// resumed, or by MPI ranks). A point's file records the hash of the files it read (SweepPoint::inputs);
// when they have changed since, the point runs again.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/outcome.hpp"
#include "sim/scenario/sweep_grid.hpp"

namespace headroom::scenario {

// The result columns of results.csv after `index`, `id` and one column per axis.
const std::vector<std::string>& sweep_result_columns();

// A finished point: {"id", "inputs", "coordinates": {axis: value}, "scenario", "result": {column: value}}.
nlohmann::json sweep_point_json(const SweepPoint& point, const Outcome& outcome);

std::filesystem::path sweep_point_file(const std::filesystem::path& out, const SweepPoint& point);

// The finished point read back; InputError naming the file when it is not valid JSON or not this
// point's result (another grid's file under the same name).
nlohmann::json read_sweep_point(const std::filesystem::path& out, const SweepPoint& point);

// Whether a finished point's result was computed from the files the point reads now (its "inputs"
// key is the point's): a trace regenerated at the same path since makes it stale.
bool sweep_point_current(const nlohmann::json& result, const SweepPoint& point);

// Indices of the points without a finished file, or whose file is stale (counted in `changed`), in
// grid order.
std::vector<std::size_t> pending_sweep_points(const SweepGrid& grid, const std::filesystem::path& out,
                                              std::size_t* changed = nullptr);

// Runs the points `which` (indices) on `threads` (0: every core), one simulation per thread, each
// written to its file as it finishes; `on_done` (called under a lock) sees each finished point.
// `check`: the invariant checks of `headroom run --check`.
void run_sweep_points(const SweepGrid& grid, const std::vector<std::size_t>& which, const std::filesystem::path& out,
                      unsigned threads, bool check,
                      const std::function<void(const SweepPoint&, const nlohmann::json&)>& on_done = {});

// Writes results.csv and results.json from every point's file, in grid order. InputError when a point
// has not finished (nothing is written then).
void write_sweep_results(const SweepGrid& grid, const std::filesystem::path& out);

}  // namespace headroom::scenario
