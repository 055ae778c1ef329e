#include "sim/report/run_report_page.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/report/chart_series.hpp"
#include "sim/report/csv_columns.hpp"
#include "sim/report/output_files.hpp"
#include "sim/report/run_report.hpp"

namespace headroom::report {

namespace {

nlohmann::json header(const nlohmann::json& s, const std::string& file, const std::string& resolved_yaml) {
  using P = nlohmann::json::json_pointer;
  nlohmann::json facts = nlohmann::json::array();
  facts.push_back({"scenario", output_field<std::string>(s, P("/scenario"), file)});
  facts.push_back({"engine", output_field<std::string>(s, P("/engine"), file)});
  facts.push_back({"model", output_field<std::string>(s, P("/model"), file)});
  const Bytes capacity = output_field<Bytes>(s, P("/gpu/capacity_bytes"), file);
  facts.push_back({"GPU profile", fmt::format("{} ({}; {} visible)", output_field<std::string>(s, P("/gpu/profile"), file),
                                              output_field<std::string>(s, P("/gpu/source"), file), format_bytes(capacity))});
  if (s.contains("memory_budget") && !s["memory_budget"].is_null())
    facts.push_back({"memory budget", fmt::format("{} ({})", format_bytes(output_field<Bytes>(s, P("/memory_budget/bytes"), file)),
                                                  output_field<std::string>(s, P("/memory_budget/rule"), file))});
  // The rank a multi-GPU deployment is simulated on, and why (summary.json startup.parallel).
  if (s.contains("startup") && s["startup"].contains("parallel"))
    facts.push_back({"simulated rank", fmt::format("rank {}: {}", output_field<int>(s, P("/startup/parallel/simulated_rank"), file),
                                                   output_field<std::string>(s, P("/startup/parallel/why"), file))});
  const nlohmann::json& r = s.at("requests");
  facts.push_back({"requests", fmt::format("{} arrived, {} completed, {} dropped, {} rejected, {} unfinished",
                                           r.value("arrived", 0), r.value("completed", 0), r.value("aborted", 0),
                                           r.value("rejected", 0), r.value("unfinished", 0))});
  if (s.contains("memory"))
    facts.push_back({"peak memory", fmt::format("{} allocated, {} reserved",
                                                format_bytes(output_field<Bytes>(s, P("/memory/peak_allocated_bytes"), file)),
                                                format_bytes(output_field<Bytes>(s, P("/memory/peak_reserved_bytes"), file)))});
  if (s.contains("simulated_s"))
    facts.push_back({"simulated", fmt::format("{:.1f} s of the trace, {} steps", output_field<double>(s, P("/simulated_s"), file),
                                              output_field<std::int64_t>(s, P("/steps/total"), file))});
  nlohmann::json details = nlohmann::json::array();
  // The closest call in one line (summary.json's `headroom`; folders written before it have none).
  std::string headroom;
  if (s.contains("headroom") && !s["headroom"].is_null()) {
    try {
      headroom = headroom_line(s["headroom"]);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: headroom: expected {{min_free_bytes, at_s, step, allocation, allocation_bytes, "
                                   "reserved_bytes, budget_left_bytes}}: {}", file, e.what()));
    }
  }
  details.push_back({{"label", "scenario as resolved (scenario.resolved.yaml)"}, {"text", resolved_yaml}});
  if (!s.value("startup", nlohmann::json::object()).value("ok", true))
    details.push_back({{"label", "start-up failure"}, {"text", output_field<std::string>(s, P("/startup/failure"), file)}});
  // The verdict object's text; folders written before the verdict was an object hold the text itself.
  const std::string verdict = s.contains("verdict") && s["verdict"].is_string()
                                  ? s["verdict"].get<std::string>()
                                  : output_field<std::string>(s, P("/verdict/text"), file);
  nlohmann::json h = {{"verdict", verdict}, {"facts", facts}, {"details", details}};
  if (!headroom.empty()) h["headroom"] = headroom;
  return h;
}

nlohmann::json memory_view(const nlohmann::json& s, const CsvColumns& t, const std::string& file) {
  using P = nlohmann::json::json_pointer;
  const std::vector<double>& time = t.column("time_s");
  nlohmann::json areas = nlohmann::json::array();
  // Non-torch bytes (CUDA context, NCCL, ...) are fixed after start-up; they sit under the torch
  // categories so that the stack meets the capacity line where the device is full.
  const double non_torch = output_field<double>(s, P("/startup/bytes/non_torch"), file);
  areas.push_back(named_series("CUDA context and non-torch", std::vector<double>(time.size(), non_torch)));
  const std::pair<const char*, const char*> categories[] = {
      {"weights", "weights_bytes"},          {"KV pool", "kv_pool_bytes"},
      {"workspaces", "workspace_bytes"},     {"graph pool", "graph_pool_bytes"},
      {"request pool", "request_pool_bytes"}, {"live activations (step peak)", "activation_bytes"},
      {"cached but free", "cached_free_bytes"}};
  for (const auto& [name, column] : categories) areas.push_back(named_series(name, t.column(column)));
  nlohmann::json lines = nlohmann::json::array();
  lines.push_back({{"name", "capacity"}, {"constant", output_field<double>(s, P("/gpu/capacity_bytes"), file)}});
  if (s.contains("memory_budget") && !s["memory_budget"].is_null())
    lines.push_back({{"name", "engine budget"},
                     {"constant", output_field<double>(s, P("/memory_budget/bytes"), file)}});
  nlohmann::json events = nlohmann::json::array();
  for (const auto& o : s.value("ooms", nlohmann::json::array()))
    events.push_back({{"x", o.value("time_s", 0.0)},
                      {"label", "OOM allocating " + o.value("tensor", std::string())},
                      {"message", o.value("message", std::string())}});
  return {{"type", "stacked_area"}, {"id", "memory"}, {"title", "Memory over time, by category"},
          {"group", "time"}, {"x_name", "time (s)"}, {"x", number_array(time)}, {"unit", "bytes"},
          {"areas", areas}, {"lines", lines}, {"events", events}};
}

bool has_column(const CsvColumns& t, const std::string& name) {
  return std::find(t.names.begin(), t.names.end(), name) != t.names.end();
}

// Free memory over time, on an axis zoomed to where it moves (the fixed weights and KV pool would
// flatten it into a sliver): the device's free memory at each step's lowest, the level it has with
// the engine at its budget, and the closest call as a marker.
nlohmann::json headroom_view(const nlohmann::json& s, const CsvColumns& t, const std::string& file) {
  using P = nlohmann::json::json_pointer;
  const std::vector<double>& time = t.column("time_s");
  nlohmann::json series = nlohmann::json::array();
  series.push_back(named_series("free on the device (lowest in the step)", t.column("device_free_bytes")));
  series.push_back(named_series("free + cached in torch's pool (lowest in the step)", t.column("free_or_cached_bytes")));
  // The device's free memory with the process at exactly the engine's budget (its non-torch bytes and
  // torch's reserved summing to it): below this line the engine holds more than it was told it may.
  const nlohmann::json& h = s.at("headroom");
  if (!h.at("budget_left_bytes").is_null())
    series.push_back({{"name", "free with the engine at its budget"}, {"reference", true},
                      {"constant", output_field<double>(s, P("/headroom/min_free_bytes"), file) -
                                       output_field<double>(s, P("/headroom/budget_left_bytes"), file)}});
  nlohmann::json marks = nlohmann::json::array();
  if (!h.at("step").is_null())
    marks.push_back({{"x", output_field<double>(s, P("/headroom/at_s"), file)},
                     {"y", output_field<double>(s, P("/headroom/min_free_bytes"), file)},
                     {"label", "closest call"},
                     {"message", headroom_line(h)}});
  return {{"type", "lines"}, {"id", "headroom"}, {"title", "Headroom: free memory over time"}, {"group", "time"},
          {"x_name", "time (s)"}, {"x", number_array(time)}, {"y_from_data", true},
          {"axes", {{{"name", "bytes"}, {"unit", "bytes"}}}}, {"series", series}, {"marks", marks}};
}

// KV tokens in use against the capacity start-up sized.
nlohmann::json kv_usage_view(const nlohmann::json& s, const CsvColumns& t, const std::string& file) {
  using P = nlohmann::json::json_pointer;
  return {{"type", "lines"}, {"id", "kv"}, {"title", "KV cache usage over time"}, {"group", "time"},
          {"x_name", "time (s)"}, {"x", number_array(t.column("time_s"))},
          {"axes", {{{"name", "tokens"}, {"unit", "count"}}}},
          {"series",
           {named_series("KV tokens in use", t.column("kv_used_tokens")),
            {{"name", "KV capacity"}, {"reference", true}, {"constant", output_field<double>(s, P("/startup/kv_tokens"), file)}}}}};
}

nlohmann::json fragmentation_view(const CsvColumns& t) {
  return {{"type", "lines"}, {"id", "fragmentation"}, {"title", "Fragmentation over time"}, {"group", "time"},
          {"x_name", "time (s)"}, {"x", number_array(t.column("time_s"))},
          {"axes", {{{"name", "bytes"}, {"unit", "bytes"}}, {{"name", "free blocks"}, {"unit", "count"}}}},
          {"series",
           {named_series("reserved − allocated", t.column("cached_free_bytes")),
            named_series("largest free block", t.column("largest_free_block_bytes")),
            [&] { auto j = named_series("free blocks", t.column("free_blocks")); j["axis"] = 1; return j; }()}}};
}

nlohmann::json load_view(const CsvColumns& t) {
  auto on_axis = [](nlohmann::json j, int axis) { j["axis"] = axis; return j; };
  return {{"type", "lines"}, {"id", "load"}, {"title", "Load over time"}, {"group", "time"},
          {"x_name", "time (s)"}, {"x", number_array(t.column("time_s"))},
          {"axes", {{{"name", "requests now"}, {"unit", "count"}}, {{"name", "since the start"}, {"unit", "count"}}}},
          {"series",
           {named_series("running", t.column("running")), named_series("waiting", t.column("waiting")),
            on_axis(named_series("arrived (total)", t.column("arrived")), 1),
            on_axis(named_series("preemptions (total)", t.column("preemptions")), 1)}}};
}

// The CDF summary.json carries (metrics.<metric>.cdf, from the run's latency histogram), x scaled.
nlohmann::json cdf_view(const std::string& id, const std::string& title, const nlohmann::json& cdf, double scale,
                        const std::string& unit, const std::string& file) {
  nlohmann::json x = nlohmann::json::array();
  for (const nlohmann::json& v : cdf.at("x")) {
    if (!v.is_number()) throw InputError(file + ": a CDF value of " + id + " is not a number");
    x.push_back(v.get<double>() * scale);
  }
  nlohmann::json series = {{"x", x}, {"p", cdf.at("p")}, {"name", title}};
  return {{"type", "cdf"}, {"id", id}, {"title", title + " (CDF)"}, {"unit", unit}, {"width", "third"},
          {"series", nlohmann::json::array({series})}};
}

}  // namespace

nlohmann::json run_report_page(const OutputFolder& dir) {
  const std::string summary_file = dir.path("summary.json").string();
  const nlohmann::json s = dir.json("summary.json", "headroom run");
  const CsvColumns timeline = dir.csv("timeline.csv");
  const std::string resolved = dir.text("scenario.resolved.yaml", "headroom run");

  nlohmann::json page;
  page["kind"] = "run";
  page["title"] = "headroom run: " + output_field<std::string>(s, nlohmann::json::json_pointer("/scenario"), summary_file);
  page["header"] = header(s, summary_file, resolved);
  nlohmann::json views = nlohmann::json::array();
  if (timeline.rows() > 0) {
    if (s.contains("headroom") && !s["headroom"].is_null() && has_column(timeline, "device_free_bytes") &&
        has_column(timeline, "free_or_cached_bytes"))
      views.push_back(headroom_view(s, timeline, summary_file));
    views.push_back(memory_view(s, timeline, summary_file));
    views.push_back(kv_usage_view(s, timeline, summary_file));
    views.push_back(fragmentation_view(timeline));
    views.push_back(load_view(timeline));
  }
  // summary.json's CDFs: the finished requests (not dropped ones) that have the figure, as its
  // percentiles. None (a failed start-up, or no request finished): no CDF.
  const std::tuple<const char*, const char*, const char*, double, const char*> cdfs[] = {
      {"ttft", "TTFT", "ttft_s", 1.0, "s"}, {"tpot", "TPOT", "tpot_s", 1e3, "ms"},
      {"e2e", "end-to-end latency", "e2e_s", 1.0, "s"}};
  for (const auto& [id, title, metric, scale, unit] : cdfs) {
    const nlohmann::json::json_pointer at("/metrics/" + std::string(metric) + "/cdf");
    if (!s.contains(at)) continue;
    const nlohmann::json& cdf = s.at(at);
    if (!cdf.is_object() || !cdf.contains("x") || !cdf.contains("p") || !cdf["x"].is_array() || !cdf["p"].is_array() ||
        cdf["x"].size() != cdf["p"].size())
      throw InputError(summary_file + ": metrics." + metric + ".cdf: expected {\"x\": [...], \"p\": [...]} of equal lengths");
    if (!cdf["x"].empty()) views.push_back(cdf_view(id, title, cdf, scale, unit, summary_file));
  }
  page["views"] = views;
  return page;
}

}  // namespace headroom::report
