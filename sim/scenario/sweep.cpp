#include "sim/scenario/sweep.hpp"

#include <fstream>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/parallel.hpp"
#include "sim/scenario/comparison.hpp"

namespace headroom::scenario {

namespace {

// A CSV field: quoted, with inner quotes doubled, when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string csv_value(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  if (v.is_number_integer()) return fmt::format("{}", v.get<std::int64_t>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());  // shortest text that reads back exactly
  return csv_field(v.get<std::string>());
}

nlohmann::json coordinates_json(const SweepPoint& p) {
  nlohmann::json c = nlohmann::json::object();
  for (const auto& [axis, value] : p.coordinates) c[axis] = value;
  return c;
}

}  // namespace

const std::vector<std::string>& sweep_result_columns() {
  static const std::vector<std::string> columns = {
      "started",     "kv_tokens",  "attempts",   "verdict",    "ooms",         "first_oom_stage",
      "first_oom_s", "first_oom_allocation",     "arrived",    "completed",    "aborted",
      "rejected",    "preemptions", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s",  "tpot_p99_s",
      "tokens_per_s", "peak_allocated_bytes",    "peak_reserved_bytes",        "failure"};
  return columns;
}

nlohmann::json sweep_point_json(const SweepPoint& point, const Outcome& o) {
  const report::ComparisonRow row = comparison_row(o, point.scenario.gpu.vendor == "amd", point.scenario.slo);
  nlohmann::json r;
  r["started"] = row.started;
  r["kv_tokens"] = row.kv_tokens;
  r["attempts"] = row.attempts;
  r["verdict"] = row.verdict;
  r["ooms"] = row.ooms;
  r["first_oom_stage"] = row.first_oom ? nlohmann::json(row.first_oom->stage) : nlohmann::json();
  r["first_oom_s"] = row.first_oom && !row.first_oom->at_startup ? nlohmann::json(row.first_oom->time_s)
                                                                 : nlohmann::json();
  r["first_oom_allocation"] = row.first_oom ? nlohmann::json(row.first_oom->tensor) : nlohmann::json();
  r["arrived"] = row.arrived;
  r["completed"] = row.completed;
  r["aborted"] = row.aborted;
  r["rejected"] = row.rejected;
  r["preemptions"] = row.preemptions;
  r["ttft_p50_s"] = report::statistic_json(row.ttft, row.ttft.p50);  // null (an empty CSV cell) without a sample
  r["ttft_p99_s"] = report::statistic_json(row.ttft, row.ttft.p99);
  r["tpot_p50_s"] = report::statistic_json(row.tpot, row.tpot.p50);
  r["tpot_p99_s"] = report::statistic_json(row.tpot, row.tpot.p99);
  r["tokens_per_s"] = row.tokens_per_s;
  r["peak_allocated_bytes"] = o.serving ? nlohmann::json(o.serving->peak_allocated) : nlohmann::json();
  r["peak_reserved_bytes"] = o.serving ? nlohmann::json(o.serving->peak_reserved) : nlohmann::json();
  r["failure"] = row.failure;
  nlohmann::json j;
  j["id"] = point.id;
  j["inputs"] = point.inputs;  // the resume key of the files it read; not in results.json
  j["coordinates"] = coordinates_json(point);
  j["scenario"] = point.scenario.name;
  j["result"] = std::move(r);
  return j;
}

std::filesystem::path sweep_point_file(const std::filesystem::path& out, const SweepPoint& point) {
  return out / "points" / (point.id + ".json");
}

nlohmann::json read_sweep_point(const std::filesystem::path& out, const SweepPoint& point) {
  const std::filesystem::path path = sweep_point_file(out, point);
  refuse_special_file(path, "sweep point's result");
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open for reading");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not a sweep point's result (invalid JSON: {}); remove it to run the point again",
                                 path.string(), e.what()));
  }
  const bool ok = j.is_object() && j.value("id", "") == point.id && j.contains("coordinates") &&
                  j["coordinates"] == coordinates_json(point) && j.contains("result") && j["result"].is_object();
  if (!ok)
    throw InputError(fmt::format("{}: not the result of point {} of this grid (id {}); remove it to run the point again",
                                 path.string(), point.index, point.id));
  for (const std::string& c : sweep_result_columns())
    if (!j["result"].contains(c))
      throw InputError(fmt::format("{}: field 'result.{}' is missing; remove the file to run the point again",
                                   path.string(), c));
  return j;
}

bool sweep_point_current(const nlohmann::json& j, const SweepPoint& point) {
  return j.is_object() && j.contains("inputs") && j["inputs"].is_string() && j["inputs"].get<std::string>() == point.inputs;
}

std::vector<std::size_t> pending_sweep_points(const SweepGrid& grid, const std::filesystem::path& out,
                                              std::size_t* changed) {
  std::vector<std::size_t> pending;
  if (changed) *changed = 0;
  for (const SweepPoint& p : grid.points) {
    std::error_code ec;
    if (!std::filesystem::exists(sweep_point_file(out, p), ec)) {
      pending.push_back(p.index);
    } else if (!sweep_point_current(read_sweep_point(out, p), p)) {  // (a bad file fails here)
      pending.push_back(p.index);
      if (changed) ++*changed;
    }
  }
  return pending;
}

void run_sweep_points(const SweepGrid& grid, const std::vector<std::size_t>& which, const std::filesystem::path& out,
                      unsigned threads, bool check,
                      const std::function<void(const SweepPoint&, const nlohmann::json&)>& on_done) {
  create_output_folder(out / "points");
  std::mutex done_mutex;
  parallel_for(which.size(), threads, [&](std::size_t k) {
    const SweepPoint& p = grid.points.at(which[k]);
    SimulateOptions options;
    options.check_invariants = check;
    const nlohmann::json j = sweep_point_json(p, simulate(p.scenario, p.scenario.policy, options));
    write_file_atomically(sweep_point_file(out, p), [&](std::ostream& o) { o << j.dump(2) << "\n"; });
    if (on_done) {
      std::lock_guard<std::mutex> lock(done_mutex);
      on_done(p, j);
    }
  });
}

void write_sweep_results(const SweepGrid& grid, const std::filesystem::path& out) {
  std::size_t changed = 0;
  std::vector<std::size_t> missing = pending_sweep_points(grid, out, &changed);
  if (!missing.empty())
    throw InputError(fmt::format("{}: {} of {} points have not finished (the first is point {}){}; run the sweep to "
                                 "finish them",
                                 out.string(), missing.size(), grid.points.size(), missing.front(),
                                 changed == 0 ? std::string()
                                              : fmt::format(", {} of them because files they read have changed since "
                                                            "they ran",
                                                            changed)));
  nlohmann::json points = nlohmann::json::array();
  std::ostringstream csv;
  csv << "index,id";
  for (const std::string& a : grid.axes) csv << "," << csv_field(a);
  for (const std::string& c : sweep_result_columns()) csv << "," << c;
  csv << "\n";
  for (const SweepPoint& p : grid.points) {
    nlohmann::json j = read_sweep_point(out, p);
    j.erase("inputs");
    csv << p.index << "," << p.id;
    for (const auto& [axis, value] : p.coordinates) csv << "," << csv_field(value);
    for (const std::string& c : sweep_result_columns()) csv << "," << csv_value(j["result"][c]);
    csv << "\n";
    j["index"] = p.index;
    points.push_back(std::move(j));
  }
  nlohmann::json all;
  all["grid"] = grid.name;
  all["axes"] = grid.axes;
  all["points"] = std::move(points);
  StagedOutputs outputs;  // both or neither
  outputs.add(out / "results.csv", csv.str());
  outputs.add(out / "results.json", all.dump(2) + "\n");
  outputs.commit();
}

}  // namespace headroom::scenario
