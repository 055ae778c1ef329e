#include "sim/cli/fail_on.hpp"

#include <fmt/format.h>

#include "sim/core/did_you_mean.hpp"
#include "sim/core/error.hpp"

namespace headroom::cli {

FailOn parse_fail_on(const std::string& text, bool has_slo) {
  static const std::vector<std::string> names{"oom", "slo", "overload"};
  FailOn f;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    if (item == "oom") f.oom = true;
    else if (item == "slo") f.slo = true;
    else if (item == "overload") f.overload = true;
    else
      throw InputError(fmt::format("--fail-on: '{}' is not one of oom, slo, overload (comma-separated, e.g. --fail-on "
                                   "oom,slo){}",
                                   item, did_you_mean_suffix(item, names)));
    if (end == text.size()) break;
    start = end + 1;
  }
  if (f.slo && !has_slo)
    throw InputError("--fail-on slo: the scenario sets no slo: (give ttft_p99_s, tpot_p99_s, e2e_p99_s or queue_s; "
                     "docs/scenario.md)");
  return f;
}

std::vector<std::string> conditions_held(const FailOn& fail, const report::Verdict& v, const std::string& who) {
  const std::string prefix = who.empty() ? "" : who + ": ";
  std::vector<std::string> held;
  if (fail.oom && v.oom) held.push_back(prefix + "oom (ran out of memory or did not start)");
  if (fail.slo && v.slo_met == false) held.push_back(fmt::format("{}slo ({})", prefix, report::missed_slo(v)));
  if (fail.overload && v.overloaded == true)
    held.push_back(fmt::format("{}overload ({})", prefix, report::overload_figure(*v.overload)));
  return held;
}

void fail_if_held(const std::vector<std::string>& held) {
  if (held.empty()) return;
  throw ConditionHeld(fmt::format("--fail-on: {}", fmt::join(held, "; ")));
}

}  // namespace headroom::cli
