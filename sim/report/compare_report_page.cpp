#include "sim/report/compare_report_page.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/report/chart_series.hpp"
#include "sim/report/csv_columns.hpp"
#include "sim/report/output_files.hpp"

namespace headroom::report {

namespace {

using P = nlohmann::json::json_pointer;
const char* const kWrittenBy = "headroom compare";

// One policy's row of comparison.json, the fields the page reads.
struct Row {
  std::string label, kind, verdict;
  bool started = false;
  int attempts = 1;
  std::string failed_stage;
  std::int64_t kv_tokens = 0, ooms = 0, ooms_avoided = 0, preemptions = 0;
  double kv_given_up = 0;
  bool oom = false;              // a first OOM, at start-up or while serving
  double oom_time_s = 0;         // serving only
  std::string oom_tensor, oom_message;
  std::int64_t latency_count = 0;
  double ttft_p50 = 0, ttft_p99 = 0, tpot_p50 = 0, tpot_p99 = 0, tokens_per_s = 0;
  std::string timeline_csv;      // "" when the policy did not start
  bool clean() const { return started && !oom; }
};

std::vector<Row> read_rows(const nlohmann::json& c, const std::string& file) {
  std::vector<Row> rows;
  const auto n = output_field<nlohmann::json::array_t>(c, P("/policies"), file).size();
  for (std::size_t i = 0; i < n; ++i) {
    auto at = [&](const std::string& key) { return P(fmt::format("/policies/{}/{}", i, key)); };
    Row r;
    r.label = output_field<std::string>(c, at("label"), file);
    r.kind = output_field<std::string>(c, at("kind"), file);
    r.verdict = output_field<std::string>(c, at("verdict"), file);
    r.started = output_field<bool>(c, at("started"), file);
    r.attempts = output_field<int>(c, at("attempts"), file);
    r.kv_tokens = output_field<std::int64_t>(c, at("kv_tokens"), file);
    r.kv_given_up = output_field<double>(c, at("kv_given_up"), file);
    r.ooms = output_field<std::int64_t>(c, at("ooms"), file);
    r.ooms_avoided = output_field<std::int64_t>(c, at("ooms_avoided"), file);
    if (!r.started) r.failed_stage = output_field<std::string>(c, at("startup_failure/stage"), file);
    const auto oom = output_field<nlohmann::json>(c, at("first_oom"), file);
    if (!oom.is_null()) {
      r.oom = true;
      r.oom_time_s = output_field<double>(c, at("first_oom/time_s"), file);
      r.oom_tensor = output_field<std::string>(c, at("first_oom/tensor"), file);
      r.oom_message = output_field<std::string>(c, at("first_oom/message"), file);
    }
    if (r.started) {
      r.preemptions = output_field<std::int64_t>(c, at("preemptions"), file);
      r.latency_count = output_field<std::int64_t>(c, at("ttft_s/count"), file);
      if (r.latency_count > 0) {  // no sample: null in the file, "-" and gaps here
        r.ttft_p50 = output_field<double>(c, at("ttft_s/p50"), file);
        r.ttft_p99 = output_field<double>(c, at("ttft_s/p99"), file);
        r.tpot_p50 = output_field<double>(c, at("tpot_s/p50"), file);
        r.tpot_p99 = output_field<double>(c, at("tpot_s/p99"), file);
      }
      r.tokens_per_s = output_field<double>(c, at("throughput_tokens_per_s"), file);
      r.timeline_csv = output_field<std::string>(c, at("timeline_csv"), file);
      // Only a file of this folder: the name comes from the JSON, not from the user's command line.
      if (r.timeline_csv.empty() || r.timeline_csv.find_first_of("/\\") != std::string::npos || r.timeline_csv[0] == '.')
        throw InputError(fmt::format("{}: field {}: expected a file name in this folder, got '{}'", file,
                                     at("timeline_csv").to_string(), r.timeline_csv));
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw InputError(file + ": field /policies: no policy");
  return rows;
}

std::string startup_cell(const Row& r) {
  if (r.started) return r.attempts > 1 ? fmt::format("ok after {} attempts", r.attempts) : "ok";
  return fmt::format("{} at {}", r.oom ? "OOM" : "failed", r.failed_stage);
}

nlohmann::json header(const nlohmann::json& c, const std::vector<Row>& rows, const std::string& file,
                      const std::string& resolved_yaml) {
  nlohmann::json facts = nlohmann::json::array();
  facts.push_back({"scenario", output_field<std::string>(c, P("/scenario"), file)});
  facts.push_back({"engine", output_field<std::string>(c, P("/engine"), file)});
  facts.push_back({"model", output_field<std::string>(c, P("/model"), file)});
  facts.push_back({"GPU profile", fmt::format("{} ({}; {} visible)", output_field<std::string>(c, P("/gpu/profile"), file),
                                              output_field<std::string>(c, P("/gpu/source"), file),
                                              format_bytes(output_field<Bytes>(c, P("/gpu/capacity_bytes"), file)))});
  std::size_t clean = 0, serving = 0, startup = 0;
  for (const Row& r : rows) (r.clean() ? clean : r.started ? serving : startup)++;
  facts.push_back({"policies", fmt::format("{}: {} without an OOM, {} out of memory while serving, {} failed to start",
                                           rows.size(), clean, serving, startup)});
  nlohmann::json details = nlohmann::json::array();
  std::string ooms;
  for (const Row& r : rows)
    if (r.oom) ooms += fmt::format("{} ({}):\n  {}\n", r.label, r.verdict, r.oom_message);
  if (!ooms.empty()) details.push_back({{"label", "each policy's first OOM, as PyTorch words it"}, {"text", ooms}});
  details.push_back({{"label", "scenario as resolved (scenario.resolved.yaml)"}, {"text", resolved_yaml}});
  return {{"verdict", compare_verdict(c, file)}, {"facts", facts}, {"details", details}};
}

nlohmann::json table_view(const std::vector<Row>& rows) {
  nlohmann::json table = nlohmann::json::array();
  auto seconds = [](const Row& r, double v) { return r.latency_count ? fmt::format("{:.3f} s", v) : std::string("—"); };
  auto millis = [](const Row& r, double v) { return r.latency_count ? fmt::format("{:.1f} ms", v * 1e3) : std::string("—"); };
  for (const Row& r : rows)
    table.push_back({r.label, startup_cell(r), r.kv_tokens > 0 ? std::to_string(r.kv_tokens) : "—",
                     fmt::format("{:.1f} %", r.kv_given_up * 100), r.verdict, std::to_string(r.ooms),
                     std::to_string(r.ooms_avoided), r.started ? std::to_string(r.preemptions) : "—",
                     seconds(r, r.ttft_p50), seconds(r, r.ttft_p99), millis(r, r.tpot_p50), millis(r, r.tpot_p99),
                     r.started ? fmt::format("{:.0f}", r.tokens_per_s) : "—"});
  return {{"type", "table"}, {"id", "policies"}, {"title", "Policies side by side"},
          {"columns", {"policy", "start-up", "KV tokens", "KV given up", "outcome", "OOMs", "OOMs avoided", "preemptions",
                       "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "tokens/s"}},
          {"rows", table}};
}

nlohmann::json categories(const std::vector<Row>& rows) {
  nlohmann::json c = nlohmann::json::array();
  for (const Row& r : rows) c.push_back(r.label);
  return c;
}

// KV tokens per policy, as a bar green (no OOM) or red (an OOM or a failed start-up): stacked series
// with one of the two values null.
nlohmann::json kv_view(const std::vector<Row>& rows) {
  nlohmann::json ok = nlohmann::json::array(), failed = nlohmann::json::array();
  for (const Row& r : rows) {
    ok.push_back(r.clean() ? nlohmann::json(r.kv_tokens) : nlohmann::json(nullptr));
    failed.push_back(r.clean() ? nlohmann::json(nullptr) : nlohmann::json(r.kv_tokens));
  }
  return {{"type", "bars"}, {"id", "kv-tokens"}, {"title", "KV tokens per policy"}, {"width", "half"},
          {"unit", "count"}, {"stack", true}, {"categories", categories(rows)},
          {"series", {{{"name", "no OOM"}, {"values", ok}, {"color", "#2e8b57"}},
                      {{"name", "OOM or failed start-up"}, {"values", failed}, {"color", "#d62728"}}}}};
}

nlohmann::json latency_view(const std::vector<Row>& rows) {
  nlohmann::json ttft = nlohmann::json::array(), tpot = nlohmann::json::array();
  for (const Row& r : rows) {
    ttft.push_back(r.latency_count ? nlohmann::json(r.ttft_p99) : nlohmann::json(nullptr));
    tpot.push_back(r.latency_count ? nlohmann::json(r.tpot_p99 * 1e3) : nlohmann::json(nullptr));
  }
  return {{"type", "bars"}, {"id", "latency"}, {"title", "TTFT and TPOT p99 per policy"}, {"width", "half"},
          {"categories", categories(rows)},
          {"axes", {{{"name", "TTFT p99"}, {"unit", "s"}}, {{"name", "TPOT p99"}, {"unit", "ms"}}}},
          {"series", {{{"name", "TTFT p99"}, {"values", ttft}}, {{"name", "TPOT p99"}, {"values", tpot}, {"axis", 1}}}}};
}

// Each started policy's reserved memory over its own timeline, the capacity, and each first OOM as a
// point on its line (the reserved bytes at the last timeline row at or before the OOM). The y axis
// starts below the lowest line, not at 0: the policies differ by a few percent of the device.
nlohmann::json memory_view(const OutputFolder& dir, const nlohmann::json& c, const std::vector<Row>& rows,
                           const std::string& file) {
  nlohmann::json series = nlohmann::json::array(), events = nlohmann::json::array();
  for (const Row& r : rows) {
    if (!r.started) continue;
    const CsvColumns t = dir.csv(r.timeline_csv);
    const std::vector<double>& time = t.column("time_s");
    const std::vector<double>& reserved = t.column("reserved_bytes");
    series.push_back({{"name", r.label}, {"points", xy_points(time, reserved)}});
    if (!r.oom || time.empty()) continue;
    std::size_t i = 0;
    while (i + 1 < time.size() && time[i + 1] <= r.oom_time_s) ++i;
    events.push_back({{"x", r.oom_time_s}, {"y", reserved[i]},
                      {"label", fmt::format("{}: OOM allocating {}", r.label, r.oom_tensor)}, {"message", r.oom_message}});
  }
  return {{"type", "xy_lines"}, {"id", "memory"}, {"title", "Reserved memory over time, every policy"},
          {"x_name", "time (s)"}, {"unit", "bytes"}, {"y_from_data", true}, {"series", series},
          {"lines", {{{"name", "capacity"}, {"constant", output_field<double>(c, P("/gpu/capacity_bytes"), file)}}}},
          {"events", events}};
}

}  // namespace

std::string compare_verdict(const nlohmann::json& c, const std::string& file) {
  const std::vector<Row> rows = read_rows(c, file);
  const Row& first = rows.front();
  const Row* best = nullptr;   // the survivor keeping the most KV tokens (the first of equals)
  const Row* most = &first;    // the row with the most KV tokens of all
  std::size_t clean = 0;
  for (const Row& r : rows) {
    if (r.kv_tokens > most->kv_tokens) most = &r;
    if (!r.clean()) continue;
    ++clean;
    if (!best || r.kv_tokens > best->kv_tokens) best = &r;
  }
  const std::size_t m = rows.size();
  if (clean == 0)
    return fmt::format("{} runs out of memory or fails to start; {}: {}.",
                       m == 1 ? std::string("The policy") : fmt::format("Each of the {} policies", m), first.label,
                       first.verdict);
  std::string s = clean == m ? fmt::format("All {} policies serve the workload without running out of memory", m)
                             : fmt::format("{} of {} policies serve the workload without running out of memory", clean, m);
  if (!first.clean()) s += fmt::format(" ({}: {})", first.label, first.verdict);
  s += clean == 1 ? fmt::format("; {}, the one that does, keeps {} KV tokens", best->label, best->kv_tokens)
                  : fmt::format("; of those, {} keeps the most KV tokens: {}", best->label, best->kv_tokens);
  if (best->kv_given_up > 0)
    s += fmt::format(", {:.1f}% fewer than {}'s {}", best->kv_given_up * 100, most->label, most->kv_tokens);
  return s + ".";
}

nlohmann::json compare_report_page(const OutputFolder& dir) {
  const std::string file = dir.path("comparison.json").string();
  const nlohmann::json c = dir.json("comparison.json", kWrittenBy);
  const std::string resolved = dir.text("scenario.resolved.yaml", kWrittenBy);
  const std::vector<Row> rows = read_rows(c, file);

  nlohmann::json page;
  page["kind"] = "compare";
  page["title"] = "headroom compare: " + output_field<std::string>(c, P("/scenario"), file);
  page["header"] = header(c, rows, file, resolved);
  nlohmann::json views = nlohmann::json::array();
  views.push_back(table_view(rows));
  views.push_back(kv_view(rows));
  bool latency = false, started = false;
  for (const Row& r : rows) latency = latency || r.latency_count > 0, started = started || r.started;
  if (latency) views.push_back(latency_view(rows));
  if (started) views.push_back(memory_view(dir, c, rows, file));
  page["views"] = views;
  return page;
}

}  // namespace headroom::report
