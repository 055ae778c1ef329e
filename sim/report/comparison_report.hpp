#pragma once
// What `headroom compare` prints and writes: one row per policy (start-up outcome and retries, KV
// tokens and the share given up against the policy that gave the most, the first OOM with
// PyTorch's figures, OOMs avoided against the first row, preemptions, latency, throughput).
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/server.hpp"
#include "sim/report/percentiles.hpp"
#include "sim/report/verdict.hpp"

namespace headroom::report {

struct FirstOom {
  bool at_startup = false;
  std::string stage;            // start-up stage, or "serving"
  double time_s = 0;            // serving only
  std::string tensor;           // the allocation that failed (serving), "" at start-up
  Bytes tried = 0, free = 0, reserved_unallocated = 0, allocated = 0;
  std::string message;
};

struct ComparisonRow {
  std::string label;
  std::string kind;
  bool started = false;
  std::string failure;          // start-up failure message (not an OOM, or with one)
  std::string failed_stage;
  int attempts = 1;
  std::vector<std::int64_t> attempted_kv_tokens;
  std::int64_t kv_tokens = 0;
  double kv_given_up = 0;       // 1 − kv_tokens / the largest kv_tokens among the rows that started
  std::optional<Bytes> kv_budget;
  Bytes canary = 0;
  bool canary_released = false;
  double canary_released_s = 0;
  std::optional<FirstOom> first_oom;
  std::int64_t ooms = 0;        // start-up OOM counts one; serving: every OOM event
  std::int64_t ooms_avoided = 0;  // against the first row
  std::int64_t arrived = 0, completed = 0, aborted = 0, rejected = 0, preemptions = 0;
  Distribution ttft, tpot;
  double tokens_per_s = 0;
  std::vector<std::string> notes;
  std::string verdict;          // "no OOM", "OOM while serving at 812.4 s", "start-up OOM", ...
  Verdict judged;               // oom, slo_met, overloaded with their figures (no sentence)
};

// Fills kv_given_up and ooms_avoided across the rows.
void finish_comparison(std::vector<ComparisonRow>& rows);

void print_comparison(std::ostream& out, const std::string& title, const std::vector<ComparisonRow>& rows);
nlohmann::json comparison_json(const std::string& scenario, const std::vector<ComparisonRow>& rows);

}  // namespace headroom::report
