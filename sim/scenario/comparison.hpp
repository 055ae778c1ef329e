#pragma once
// `headroom compare`: the same scenario and workload under each policy, one simulation per core.
#include <vector>

#include "sim/core/progress.hpp"
#include "sim/report/comparison_report.hpp"
#include "sim/scenario/outcome.hpp"

namespace headroom::scenario {

// Runs every policy (threads: 0 = every core); outcomes in the order of `policies`. `progress` (may be
// null) counts each finished simulation.
std::vector<Outcome> compare_policies(const Scenario& scenario, const std::vector<policy::PolicySpec>& policies,
                                      unsigned threads = 0, Progress* progress = nullptr);

// The table row of one outcome (finish_comparison() fills the cross-row columns), judged against
// the scenario's SLO and for overload (report/verdict.hpp).
report::ComparisonRow comparison_row(const Outcome& outcome, bool amd, const report::Slo& slo = {});

}  // namespace headroom::scenario
