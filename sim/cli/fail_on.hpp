#pragma once
// --fail-on oom,slo,overload: `run`, `compare` and `tune` exit with kExitConditionHeld when one of
// the named conditions holds, after writing every output as usual, so that a CI pipeline can gate
// on the verdict. Bad input stays exit 2 (main.cpp); 1 is an internal error.
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/report/verdict.hpp"

namespace headroom::cli {

inline constexpr int kExitConditionHeld = 3;

struct FailOn {
  bool oom = false;       // did not start, or ran out of memory (report::Verdict::oom)
  bool slo = false;       // missed the scenario's SLO (slo_met false)
  bool overload = false;  // the queue grew without bound (overloaded true)
};

// "oom,slo,overload" in any order and subset; InputError naming the item otherwise. `has_slo`: the
// scenario sets an `slo:` (else --fail-on slo is an error: nothing to fail on).
FailOn parse_fail_on(const std::string& text, bool has_slo);

// The conditions of `fail` that hold for `v`, each as "oom", "slo" or "overload" with the figure,
// prefixed by `who` (a policy's label, a tune answer) when not empty.
std::vector<std::string> conditions_held(const FailOn& fail, const report::Verdict& v, const std::string& who = "");

// Thrown once a command's outputs are written; main() prints it and exits kExitConditionHeld.
class ConditionHeld : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws ConditionHeld listing `held` when it is not empty.
void fail_if_held(const std::vector<std::string>& held);

}  // namespace headroom::cli
