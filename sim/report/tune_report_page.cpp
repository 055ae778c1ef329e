#include "sim/report/tune_report_page.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/report/output_files.hpp"

namespace headroom::report {

namespace {

using P = nlohmann::json::json_pointer;
const char* const kWrittenBy = "headroom tune";

struct Point {
  double value = 0;
  bool started = false, failed = false;
  std::int64_t kv_tokens = 0, preemptions = 0;
  std::string failed_variant, failure;
  std::optional<double> ttft_p99, tpot_p99;  // null in tune.json: a failed value or no completed request
};

// A number that may be null (no best value, a latency without a sample).
std::optional<double> optional_number(const nlohmann::json& t, const nlohmann::json::json_pointer& at,
                                      const std::string& file) {
  if (output_field<nlohmann::json>(t, at, file).is_null()) return std::nullopt;
  return output_field<double>(t, at, file);
}

std::vector<Point> read_points(const nlohmann::json& t, const std::string& file) {
  std::vector<Point> points;
  const auto n = output_field<nlohmann::json::array_t>(t, P("/frontier"), file).size();
  for (std::size_t i = 0; i < n; ++i) {
    auto at = [&](const std::string& key) { return P(fmt::format("/frontier/{}/{}", i, key)); };
    Point p;
    p.value = output_field<double>(t, at("value"), file);
    p.started = output_field<bool>(t, at("started"), file);
    p.failed = output_field<bool>(t, at("oom"), file);
    p.kv_tokens = output_field<std::int64_t>(t, at("kv_tokens"), file);
    p.preemptions = output_field<std::int64_t>(t, at("preemptions"), file);
    p.failed_variant = output_field<std::string>(t, at("failed_variant"), file);
    p.failure = output_field<std::string>(t, at("failure"), file);
    p.ttft_p99 = optional_number(t, at("ttft_p99_s"), file);
    p.tpot_p99 = optional_number(t, at("tpot_p99_s"), file);
    if (!points.empty() && p.value <= points.back().value)
      throw InputError(fmt::format("{}: field {}: the frontier's values must ascend", file, at("value").to_string()));
    points.push_back(std::move(p));
  }
  if (points.empty()) throw InputError(file + ": field /frontier: no grid point");
  return points;
}

// A knob value as the text output prints it.
std::string value_text(double v) { return fmt::format("{:.6g}", v); }

const Point* point_at(const std::vector<Point>& points, double value) {
  for (const Point& p : points)
    if (p.value == value) return &p;
  return nullptr;
}

std::string knob_name(const nlohmann::json& t, const std::string& file) {
  const std::string unit = t.value("unit", std::string());
  return output_field<std::string>(t, P("/knob"), file) + (unit.empty() ? "" : " (" + unit + ")");
}

nlohmann::json header(const nlohmann::json& t, const std::vector<Point>& points, const std::string& file,
                      const std::string& resolved_yaml) {
  nlohmann::json facts = nlohmann::json::array();
  facts.push_back({"scenario", output_field<std::string>(t, P("/scenario"), file)});
  facts.push_back({"engine", output_field<std::string>(t, P("/engine"), file)});
  facts.push_back({"model", output_field<std::string>(t, P("/model"), file)});
  facts.push_back({"GPU profile", fmt::format("{} ({}; {} visible)", output_field<std::string>(t, P("/gpu/profile"), file),
                                              output_field<std::string>(t, P("/gpu/source"), file),
                                              format_bytes(output_field<Bytes>(t, P("/gpu/capacity_bytes"), file)))});
  facts.push_back({"knob", fmt::format("{} from {} to {}, {} points, step {}; the most aggressive value is the {}",
                                       knob_name(t, file), value_text(output_field<double>(t, P("/range/0"), file)),
                                       value_text(output_field<double>(t, P("/range/1"), file)), points.size(),
                                       value_text(output_field<double>(t, P("/step"), file)),
                                       output_field<bool>(t, P("/higher_is_aggressive"), file) ? "largest" : "smallest")});
  std::string variants;
  for (const auto& v : output_field<std::vector<std::string>>(t, P("/variants"), file))
    variants += (variants.empty() ? "" : ", ") + v;
  facts.push_back({"stress variants", fmt::format("{} ({} simulations; a value fails when any variant fails)", variants,
                                                  output_field<std::int64_t>(t, P("/simulations"), file))});
  if (!output_field<bool>(t, P("/monotone"), file))
    facts.push_back({"frontier", "not monotone: a value beyond the first failure passed"});
  nlohmann::json details = nlohmann::json::array();
  std::string failures;
  for (const Point& p : points)
    if (p.failed) failures += fmt::format("{}: {}: {}\n", value_text(p.value), p.failed_variant, p.failure);
  if (!failures.empty()) details.push_back({{"label", "the failing values and why"}, {"text", failures}});
  details.push_back({{"label", "scenario as resolved (scenario.resolved.yaml)"}, {"text", resolved_yaml}});
  return {{"verdict", tune_verdict(t, file)}, {"facts", facts}, {"details", details}};
}

nlohmann::json frontier_view(const nlohmann::json& t, const std::vector<Point>& points, const std::string& file) {
  nlohmann::json x = nlohmann::json::array(), kv = nlohmann::json::array(), ttft = nlohmann::json::array(),
                 failed = nlohmann::json::array(), why = nlohmann::json::array();
  std::vector<double> values;
  std::vector<bool> fails;
  for (const Point& p : points) {
    x.push_back(p.value);
    // A value whose engine did not start has no KV cache and no latency to draw.
    kv.push_back(p.started ? nlohmann::json(p.kv_tokens) : nlohmann::json(nullptr));
    ttft.push_back(p.ttft_p99 ? nlohmann::json(*p.ttft_p99) : nlohmann::json(nullptr));  // a gap
    failed.push_back(p.failed);
    why.push_back(p.failed ? p.failed_variant + ": " + p.failure : std::string());
    values.push_back(p.value);
    fails.push_back(p.failed);
  }
  nlohmann::json regions = nlohmann::json::array();
  for (const auto& [lo, hi] : failing_regions(values, fails, output_field<double>(t, P("/step"), file)))
    regions.push_back({lo, hi});
  const std::optional<double> best = optional_number(t, P("/best"), file);
  return {{"type", "frontier"}, {"id", "frontier"}, {"title", "The frontier: KV tokens and TTFT p99 by knob value"},
          {"x_name", knob_name(t, file)}, {"x", x}, {"kv_tokens", kv}, {"ttft_p99_s", ttft}, {"failed", failed},
          {"failures", why}, {"regions", regions}, {"best", best ? nlohmann::json(*best) : nlohmann::json(nullptr)}};
}

nlohmann::json table_view(const std::vector<Point>& points, std::optional<double> best) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Point& p : points)
    rows.push_back({value_text(p.value) + (best && *best == p.value ? " (best)" : ""),
                    p.started ? std::to_string(p.kv_tokens) : "—", p.failed ? "yes" : "no",
                    p.ttft_p99 ? fmt::format("{:.3f} s", *p.ttft_p99) : "—",
                    p.tpot_p99 ? fmt::format("{:.1f} ms", *p.tpot_p99 * 1e3) : "—",
                    p.started ? std::to_string(p.preemptions) : "—",
                    p.failed ? p.failed_variant + ": " + p.failure : std::string()});
  return {{"type", "table"}, {"id", "frontier-table"}, {"title", "Every grid point (latency on the base variant)"},
          {"columns", {"value", "KV tokens", "fails", "TTFT p99", "TPOT p99", "preemptions", "first failure"}},
          {"rows", rows}};
}

}  // namespace

std::vector<std::pair<double, double>> failing_regions(const std::vector<double>& values, const std::vector<bool>& failed,
                                                        double step) {
  std::vector<std::pair<double, double>> regions;
  if (values.empty()) return regions;
  const double lo = values.front(), hi = values.back();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!failed[i]) continue;
    std::size_t j = i;
    while (j + 1 < values.size() && failed[j + 1]) ++j;
    regions.emplace_back(std::max(lo, values[i] - step / 2), std::min(hi, values[j] + step / 2));
    i = j;
  }
  return regions;
}

std::string tune_verdict(const nlohmann::json& t, const std::string& file) {
  const std::vector<Point> points = read_points(t, file);
  const std::string knob = output_field<std::string>(t, P("/knob"), file);
  const std::optional<double> best = optional_number(t, P("/best"), file);
  const std::optional<double> failing = optional_number(t, P("/first_failing"), file);
  if (!best)
    return fmt::format("Every value of {} from {} to {} runs out of memory or fails to start; widen the range.", knob,
                       value_text(points.front().value), value_text(points.back().value));
  const bool higher = output_field<bool>(t, P("/higher_is_aggressive"), file);
  std::string s = fmt::format("{} = {} is the {} value that never runs out of memory", knob, value_text(*best),
                              higher ? "largest" : "smallest");
  if (const Point* p = point_at(points, *best)) s += fmt::format(" ({} KV tokens)", p->kv_tokens);
  if (!failing) return s + fmt::format(": every value tried passes, so the range may be widened {}.", higher ? "upwards" : "downwards");
  s += fmt::format("; {} fails", value_text(*failing));
  if (const Point* p = point_at(points, *failing)) s += fmt::format(" ({}: {})", p->failed_variant, p->failure);
  return s + ".";
}

nlohmann::json tune_report_page(const OutputFolder& dir) {
  const std::string file = dir.path("tune.json").string();
  const nlohmann::json t = dir.json("tune.json", kWrittenBy);
  const std::string resolved = dir.text("scenario.resolved.yaml", kWrittenBy);
  const std::vector<Point> points = read_points(t, file);

  nlohmann::json page;
  page["kind"] = "tune";
  page["title"] = fmt::format("headroom tune: {}, {}", output_field<std::string>(t, P("/scenario"), file),
                              output_field<std::string>(t, P("/knob"), file));
  page["header"] = header(t, points, file, resolved);
  page["views"] = {frontier_view(t, points, file), table_view(points, optional_number(t, P("/best"), file))};
  return page;
}

}  // namespace headroom::report
