#include "sim/report/comparison_report.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace headroom::report {

void finish_comparison(std::vector<ComparisonRow>& rows) {
  std::int64_t most = 0;
  for (const ComparisonRow& r : rows) most = std::max(most, r.kv_tokens);
  for (ComparisonRow& r : rows) {
    r.kv_given_up = most > 0 ? 1.0 - static_cast<double>(r.kv_tokens) / static_cast<double>(most) : 0;
    r.ooms_avoided = rows.empty() ? 0 : std::max<std::int64_t>(0, rows.front().ooms - r.ooms);
  }
}

namespace {

std::string cell(const ComparisonRow& r) {
  if (!r.started) return r.first_oom ? "start-up OOM" : "start-up failed";
  if (r.first_oom) return fmt::format("OOM at {:.1f} s", r.first_oom->time_s);
  return r.canary_released ? fmt::format("none (canary released at {:.1f} s)", r.canary_released_s) : "none";
}

}  // namespace

void print_comparison(std::ostream& out, const std::string& title, const std::vector<ComparisonRow>& rows) {
  fmt::print(out, "{}\n", title);
  fmt::print(out, "  {:<44} {:>7} {:>10} {:>8}  {:<36} {:>5} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8}\n", "policy",
             "starts", "KV tokens", "given up", "first OOM", "OOMs", "avoided", "preempt", "TTFT p50", "TTFT p99",
             "TPOT p50", "TPOT p99", "tok/s");
  for (const ComparisonRow& r : rows) {
    std::string starts = r.started ? (r.attempts > 1 ? fmt::format("ok/{}", r.attempts) : "ok")
                                   : (r.attempts > 1 ? fmt::format("no/{}", r.attempts) : "no");
    std::string label = r.label.size() > 44 ? r.label.substr(0, 41) + "..." : r.label;
    auto seconds = [](const Distribution& d, double v) { return d.count ? fmt::format("{:.3f}s", v) : std::string("-"); };
    auto millis = [](const Distribution& d, double v) { return d.count ? fmt::format("{:.1f}ms", v * 1e3) : std::string("-"); };
    if (r.started)
      fmt::print(out, "  {:<44} {:>7} {:>10} {:>7.1f}%  {:<36} {:>5} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8.0f}\n", label,
                 starts, r.kv_tokens, r.kv_given_up * 100, cell(r), r.ooms, r.ooms_avoided, r.preemptions,
                 seconds(r.ttft, r.ttft.p50), seconds(r.ttft, r.ttft.p99), millis(r.tpot, r.tpot.p50),
                 millis(r.tpot, r.tpot.p99), r.tokens_per_s);
    else
      fmt::print(out, "  {:<44} {:>7} {:>10} {:>7.1f}%  {:<36} {:>5} {:>7}\n", label, starts,
                 r.kv_tokens > 0 ? std::to_string(r.kv_tokens) : std::string("-"), r.kv_given_up * 100, cell(r),
                 r.ooms, r.ooms_avoided);
  }
  for (const ComparisonRow& r : rows) {
    fmt::print(out, "  {}:\n", r.label);
    if (!r.started) fmt::print(out, "    start-up failed at {}: {}\n", r.failed_stage, r.failure);
    if (r.first_oom && r.started)
      fmt::print(out, "    first OOM at {:.3f} s allocating {}: {} free, {} reserved but unallocated\n      {}\n",
                 r.first_oom->time_s, r.first_oom->tensor, format_bytes(r.first_oom->free),
                 format_bytes(r.first_oom->reserved_unallocated), r.first_oom->message);
    for (const std::string& n : r.notes) fmt::print(out, "    {}\n", n);
    if (r.judged.overloaded == true) fmt::print(out, "    overloaded: {}\n", overload_figure(*r.judged.overload));
    if (r.judged.slo_met) fmt::print(out, "    SLO met\n");
    else if (r.judged.slo_met == false) fmt::print(out, "    SLO missed: {}\n", missed_slo(r.judged));
  }
}

nlohmann::json comparison_json(const std::string& scenario, const std::vector<ComparisonRow>& rows) {
  nlohmann::json j;
  j["scenario"] = scenario;
  j["policies"] = nlohmann::json::array();
  auto dist = [](const Distribution& d) {
    return nlohmann::json{{"count", d.count},
                          {"mean", statistic_json(d, d.mean)},
                          {"p50", statistic_json(d, d.p50)},
                          {"p90", statistic_json(d, d.p90)},
                          {"p99", statistic_json(d, d.p99)},
                          {"max", statistic_json(d, d.max)}};
  };
  for (const ComparisonRow& r : rows) {
    nlohmann::json p;
    p["label"] = r.label;
    p["kind"] = r.kind;
    p["started"] = r.started;
    p["startup_failure"] = r.started ? nlohmann::json(nullptr) : nlohmann::json{{"stage", r.failed_stage}, {"message", r.failure}};
    p["attempts"] = r.attempts;
    p["attempted_kv_tokens"] = r.attempted_kv_tokens;
    p["kv_tokens"] = r.kv_tokens;
    p["kv_given_up"] = r.kv_given_up;
    p["kv_budget_bytes"] = r.kv_budget ? nlohmann::json(*r.kv_budget) : nlohmann::json(nullptr);
    p["canary_bytes"] = r.canary;
    p["canary_released_s"] = r.canary_released ? nlohmann::json(r.canary_released_s) : nlohmann::json(nullptr);
    if (r.first_oom) {
      const FirstOom& o = *r.first_oom;
      p["first_oom"] = {{"at_startup", o.at_startup}, {"stage", o.stage}, {"time_s", o.time_s}, {"tensor", o.tensor},
                        {"tried_bytes", o.tried}, {"free_bytes", o.free}, {"allocated_bytes", o.allocated},
                        {"reserved_unallocated_bytes", o.reserved_unallocated}, {"message", o.message}};
    } else {
      p["first_oom"] = nullptr;
    }
    p["ooms"] = r.ooms;
    p["ooms_avoided"] = r.ooms_avoided;
    p["requests"] = {{"arrived", r.arrived}, {"completed", r.completed}, {"aborted", r.aborted}, {"rejected", r.rejected}};
    p["preemptions"] = r.preemptions;
    p["ttft_s"] = dist(r.ttft);
    p["tpot_s"] = dist(r.tpot);
    p["throughput_tokens_per_s"] = r.tokens_per_s;
    p["notes"] = r.notes;
    p["verdict"] = r.verdict;
    p["slo_met"] = r.judged.slo_met ? nlohmann::json(*r.judged.slo_met) : nlohmann::json(nullptr);
    p["overloaded"] = r.judged.overloaded ? nlohmann::json(*r.judged.overloaded) : nlohmann::json(nullptr);
    j["policies"].push_back(std::move(p));
  }
  return j;
}

}  // namespace headroom::report
