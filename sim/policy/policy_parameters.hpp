#pragma once
// Policy parameters as data (as Vidur's config classes drive its flags): one catalogue of every
// parameter a PolicySpec holds (name, type, unit, range, default, help, the PolicySpec field, the
// `tune --knob` it is), and one table per policy of the parameters it reads, in the order they are
// read and written, each with how describe() shows it. Reading (sim/scenario/policy_yaml.cpp),
// writing (emit_policy), describing (describe()), validating (make_policy) and tuning
// (sim/scenario/tune.cpp) all walk these tables.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/policy/policy.hpp"

namespace headroom::policy {

enum class ParameterType {
  text,      // a string
  boolean,
  fraction,  // a share in (0, 1] (or (0, 1) where the range's upper end is open)
  number,    // a real number in the range
  bytes,     // a byte size ("150MiB"); tuned in MiB
  integer,   // a whole number in the range
};

// The values a parameter may take; an open end excludes its bound.
struct ParameterRange {
  double lo = 0;
  double hi = 0;  // +inf: no upper bound
  bool lo_open = false;
  bool hi_open = false;
  bool contains(double v) const;
  std::string text() const;  // "(0, 1]", "[0, 100]"; "at least 0" without an upper bound
};

// The PolicySpec field a parameter is.
using ParameterField = std::variant<std::string PolicySpec::*, std::optional<double> PolicySpec::*, double PolicySpec::*,
                                    Bytes PolicySpec::*, bool PolicySpec::*, int PolicySpec::*,
                                    std::int64_t PolicySpec::*>;

struct PolicyParameter {
  std::string_view name;  // the YAML key
  ParameterType type;
  std::string_view unit;  // "" | "bytes" | "tokens"
  std::optional<ParameterRange> range;  // checked by make_policy; none: any value of the type
  std::string_view default_value;       // as docs/scenario.md writes it
  std::string_view help;
  ParameterField field;
  std::string_view knob;  // its `tune --knob` name; "" when not tunable
};

// How describe() shows a parameter of a policy: "k=2", only when not zero ("margin=150.00 MiB"),
// its name when true ("cudagraph_estimate"), its value alone ("expandable_segments:True"), or not.
enum class Shown { always, when_nonzero, flag, bare, hidden };

struct PolicyParameterUse {
  const PolicyParameter* parameter;
  Shown shown;
};

// Every parameter, in the order make_policy checks them.
const std::vector<PolicyParameter>& policy_parameters();
// The parameter of that name, or null.
const PolicyParameter* find_policy_parameter(std::string_view name);
// The parameters a policy reads (`label` first), in the order they are written.
const std::vector<PolicyParameterUse>& policy_table(PolicyKind kind);
// Whether the policy reads the parameter.
bool policy_reads(PolicyKind kind, const PolicyParameter& parameter);
// The parameters `tune` can tune, in the order `--knob` lists them.
const std::vector<const PolicyParameter*>& tunable_policy_parameters();

// A parameter's value in a spec: whether it is set (an optional one: label, fraction), as a number
// (numbers, bytes, integers, booleans as 0/1) and as text for describe().
bool parameter_set(const PolicySpec& spec, const PolicyParameter& p);
double parameter_number(const PolicySpec& spec, const PolicyParameter& p);
std::string parameter_text(const PolicySpec& spec, const PolicyParameter& p);
// Sets a number parameter (bytes rounded to whole bytes as given).
void set_parameter_number(PolicySpec& spec, const PolicyParameter& p, double value);

}  // namespace headroom::policy
