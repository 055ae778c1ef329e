#pragma once
// The verdict of one simulation beyond "did it run out of memory": whether it met the scenario's
// latency objectives (`slo:`) and whether its queue kept up with the arrivals. `run` writes it as
// summary.json's `verdict`, `compare` per policy, `tune` per grid point and for its answer; the
// `--fail-on` conditions read it. docs/run.md states the rules.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/outcome.hpp"

namespace headroom::report {

// Latency objectives, any subset: p99 limits in seconds over the finished requests. queue_s limits
// the p99 of the time from a request's arrival to its first scheduling (the step that starts its
// prefill, or its first chunk, is planned): the time it waited in the engine's queue.
struct Slo {
  std::optional<double> ttft_p99_s, tpot_p99_s, e2e_p99_s, queue_s;
  bool any() const { return ttft_p99_s || tpot_p99_s || e2e_p99_s || queue_s; }
};

// The scenario keys of Slo, in the order above.
const std::vector<std::string>& slo_keys();
// The limit under `key` (one of slo_keys()).
std::optional<double>& slo_limit(Slo& slo, std::string_view key);

// Overloaded: the queue grew without bound. Decided when the workload's last request arrives: the
// requests still waiting in the engine's queue then, as a share of all that arrived, above this. A
// queue that keeps up holds about (arrival rate × queueing time) requests whatever the trace's
// length; one that does not holds (1 − service rate / arrival rate) of the arrivals, so more than a
// tenth waiting means the engine served under nine tenths of the arrival rate.
inline constexpr double kOverloadedWaitingShare = 0.1;

struct SloCheck {
  std::string key;               // "ttft_p99_s", ...
  double limit = 0;
  std::optional<double> value;   // none when the metric has no sample
  bool met = false;              // value <= limit (a metric without a sample does not meet it)
};

struct OverloadFigures {
  double last_arrival_s = 0;
  std::int64_t waiting = 0;      // in the queue at the last arrival
  std::int64_t arrived = 0;
  double served_until_s = 0;     // when the last request left (the simulated time)
  double share() const { return arrived > 0 ? static_cast<double>(waiting) / static_cast<double>(arrived) : 0; }
};

struct Verdict {
  // Did not start (a start-up OOM or the engine's own memory check) or ran out of memory serving.
  bool oom = false;
  // None without an SLO; false when the engine did not start or died, or a limit is not met.
  std::optional<bool> slo_met;
  // None when undecided: the engine did not start, or died before the last arrival.
  std::optional<bool> overloaded;
  std::vector<SloCheck> slo;     // one per limit the scenario sets
  std::optional<OverloadFigures> overload;
  std::string text;              // the worst of OOM / overloaded / SLO missed / fine, with its figure
};

// `who` names the deployment ("vLLM on h100-sxm-80gb with Llama-3.1-8B"); `oom_text` is the
// OOM sentence (run_report.hpp's verdict) used when the run failed.
Verdict judge(const Outcome& outcome, const Slo& slo, const std::string& who, const std::string& oom_text);
// Only the decisions (no sentence): for compare's rows and tune's points.
Verdict judge(const Outcome& outcome, const Slo& slo);

// "TTFT p99 3.210 s > 2 s"; every missed limit, comma-separated; "" when none is missed.
std::string missed_slo(const Verdict& v);
// "4,210 of 12,031 requests (35 %) still waiting at the last arrival (3537.0 s)".
std::string overload_figure(const OverloadFigures& f);

nlohmann::json verdict_json(const Verdict& v);
nlohmann::json slo_json(const Slo& slo);  // null when no limit is set

}  // namespace headroom::report
