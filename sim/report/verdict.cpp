#include "sim/report/verdict.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace headroom::report {

const std::vector<std::string>& slo_keys() {
  static const std::vector<std::string> keys{"ttft_p99_s", "tpot_p99_s", "e2e_p99_s", "queue_s"};
  return keys;
}

std::optional<double>& slo_limit(Slo& slo, std::string_view key) {
  if (key == "ttft_p99_s") return slo.ttft_p99_s;
  if (key == "tpot_p99_s") return slo.tpot_p99_s;
  if (key == "e2e_p99_s") return slo.e2e_p99_s;
  if (key == "queue_s") return slo.queue_s;
  throw std::logic_error(fmt::format("slo_limit: no objective '{}'", key));
}

namespace {

// The distribution an objective limits, and how the verdict names it.
const Distribution& slo_metric(const Outcome& o, std::string_view key) {
  if (key == "ttft_p99_s") return o.ttft;
  if (key == "tpot_p99_s") return o.tpot;
  if (key == "e2e_p99_s") return o.e2e;
  return o.queue;
}

std::string slo_name(std::string_view key) {
  if (key == "ttft_p99_s") return "TTFT p99";
  if (key == "tpot_p99_s") return "TPOT p99";
  if (key == "e2e_p99_s") return "e2e p99";
  return "queue p99";
}

// Seconds as the run's table prints them: TPOT in ms, the rest in s.
std::string slo_seconds(std::string_view key, double s) {
  return key == "tpot_p99_s" ? fmt::format("{:.1f} ms", s * 1e3) : fmt::format("{:.3f} s", s);
}

std::string slo_check_text(const SloCheck& c) {
  if (!c.value) return fmt::format("{} - (no request finished) against {}", slo_name(c.key), slo_seconds(c.key, c.limit));
  return fmt::format("{} {} {} {}", slo_name(c.key), slo_seconds(c.key, *c.value), c.met ? "<=" : ">",
                     slo_seconds(c.key, c.limit));
}

}  // namespace

Verdict judge(const Outcome& o, const Slo& slo) {
  Verdict v;
  v.oom = o.failed();
  const bool served = o.started() && !o.serving->died;
  if (slo.any()) {
    Slo limits = slo;
    bool met = served;
    for (const std::string& key : slo_keys()) {
      const std::optional<double> limit = slo_limit(limits, key);
      if (!limit) continue;
      SloCheck c;
      c.key = key;
      c.limit = *limit;
      const Distribution& d = slo_metric(o, key);
      if (d.count > 0) c.value = d.p99;
      c.met = c.value && *c.value <= c.limit;
      met = met && c.met;
      v.slo.push_back(c);
    }
    v.slo_met = met;
  }
  if (o.started() && o.serving->last_arrival_s) {
    const engine::ServingResult& r = *o.serving;
    OverloadFigures f{*r.last_arrival_s, r.waiting_at_last_arrival, r.arrived, r.end_time_s};
    v.overload = f;
    v.overloaded = f.share() > kOverloadedWaitingShare;
  }
  return v;
}

Verdict judge(const Outcome& o, const Slo& slo, const std::string& who, const std::string& oom_text) {
  Verdict v = judge(o, slo);
  if (v.oom) {
    v.text = oom_text;
  } else if (v.overloaded.value_or(false)) {
    v.text = fmt::format("{} is overloaded: {}, over the {:g} % at which its queue grows without bound; serving "
                         "them took until {:.1f} s",
                         who, overload_figure(*v.overload), kOverloadedWaitingShare * 100, v.overload->served_until_s);
  } else if (v.slo_met == false) {
    v.text = fmt::format("{} misses the SLO: {}", who, missed_slo(v));
  } else {
    v.text = oom_text;
    if (v.slo_met) {
      std::vector<std::string> checks;
      for (const SloCheck& c : v.slo) checks.push_back(slo_check_text(c));
      v.text += fmt::format(", within the SLO ({})", fmt::join(checks, ", "));
    }
  }
  return v;
}

std::string missed_slo(const Verdict& v) {
  std::vector<std::string> missed;
  for (const SloCheck& c : v.slo)
    if (!c.met) missed.push_back(slo_check_text(c));
  if (missed.empty() && v.slo_met == false) return "the engine did not serve the workload";
  return fmt::format("{}", fmt::join(missed, ", "));
}

std::string overload_figure(const OverloadFigures& f) {
  return fmt::format("{} of {} requests ({:.0f} %) still waiting at the last arrival ({:.1f} s)", f.waiting, f.arrived,
                     f.share() * 100, f.last_arrival_s);
}

nlohmann::json verdict_json(const Verdict& v) {
  auto opt_bool = [](const std::optional<bool>& b) { return b ? nlohmann::json(*b) : nlohmann::json(nullptr); };
  nlohmann::json checks = nlohmann::json::array();
  for (const SloCheck& c : v.slo)
    checks.push_back({{"objective", c.key},
                      {"limit_s", c.limit},
                      {"value_s", c.value ? nlohmann::json(*c.value) : nlohmann::json(nullptr)},
                      {"met", c.met}});
  nlohmann::json overload = nullptr;
  if (v.overload)
    overload = {{"last_arrival_s", v.overload->last_arrival_s},
                {"waiting_at_last_arrival", v.overload->waiting},
                {"arrived", v.overload->arrived},
                {"waiting_share", v.overload->share()},
                {"threshold", kOverloadedWaitingShare},
                {"served_until_s", v.overload->served_until_s}};
  return {{"oom", v.oom},
          {"slo_met", opt_bool(v.slo_met)},
          {"overloaded", opt_bool(v.overloaded)},
          {"text", v.text},
          {"slo", v.slo.empty() ? nlohmann::json(nullptr) : checks},
          {"overload", overload}};
}

nlohmann::json slo_json(const Slo& slo) {
  if (!slo.any()) return nullptr;
  nlohmann::json j = nlohmann::json::object();
  Slo limits = slo;
  for (const std::string& key : slo_keys())
    if (const std::optional<double> limit = slo_limit(limits, key)) j[key] = *limit;
  return j;
}

}  // namespace headroom::report
