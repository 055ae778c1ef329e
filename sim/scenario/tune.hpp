#pragma once
// `headroom tune`: the most aggressive value of one knob that never runs out of memory, on the
// scenario's workload and on stressed variants of it, by a grid over [lo, hi] evaluated on every
// core. For a memory fraction the most aggressive value is the largest (more KV); for a buffer
// (k, margin, floor, canary) the smallest; for the requests or tokens of a step (max_num_seqs,
// max_num_batched_tokens and the other engines' names) the largest, a whole number. Jointly with a
// second knob: the first knob's answer at each of a few values of the second (tune_jointly).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/progress.hpp"
#include "sim/scenario/scenario.hpp"

namespace headroom::scenario {

struct KnobInfo {
  std::string name;
  bool higher_is_aggressive = true;  // fractions: true; buffers: false
  std::string unit;                  // "" or "MiB"
  bool fraction = false;             // a share in (0, 1]: resolution 0.005, margin at least 0.01
  bool whole = false;                // a whole number of at least 1 (requests or tokens of a step)
};
// The knobs tune understands for this scenario's engine and policy; InputError with the list
// otherwise.
KnobInfo knob_info(const Scenario& scenario, const std::string& name);
std::vector<std::string> knob_names();
// Sets the knob in `scenario` (the engine's knob, or the scenario policy's parameter).
void set_knob(Scenario& scenario, const std::string& name, double value);

// A stressed variant of the workload: the trace as it is, its rate × factor, a burst injected in
// the middle, or another seed.
struct StressVariant {
  enum class Kind { base, rate, burst, seed } kind = Kind::base;
  double value = 1;  // rate factor, burst factor, seed offset
  std::string name() const;
};
// "base,rate:1.25,burst:2,seed:1" (or "none" for the base alone); InputError naming the item.
std::vector<StressVariant> parse_stress(const std::string& text);
// The variants when none are given: base, rate × 1.25, a 2× burst; and seed + 1 for a
// synthetic workload (a trace replays the same requests whatever the seed).
std::vector<StressVariant> default_stress(const Scenario& scenario);
// Applies one variant to a copy of the scenario; `duration_s` is the workload's span (the burst
// goes in its middle, 60 s long or a tenth of the span if shorter).
Scenario stressed(const Scenario& scenario, const StressVariant& variant, double duration_s);

struct TunePoint {
  double value = 0;
  bool started = false;
  std::int64_t kv_tokens = 0;
  bool failed = false;            // a start-up failure or an OOM in any variant
  std::string failed_variant;     // the first variant that failed
  std::string failure;            // its start-up failure or first OOM, one line
  // On the base variant; none when the value failed (its latency would be of a cut-short run) or
  // nothing completed: never 0.
  std::optional<double> ttft_p99_s, tpot_p99_s;
  std::int64_t preemptions = 0;   // on the base variant
  // The base variant's verdict (report/verdict.hpp); none when the value failed, and slo_met none
  // when the scenario sets no SLO.
  std::optional<bool> slo_met, overloaded;
};

// One variant's cliff, bisected between its last passing and first failing grid values.
struct VariantCliff {
  std::string variant;
  std::optional<double> safe;     // its most aggressive passing value found; none when the first grid value fails
  std::optional<double> failing;  // its least aggressive failing value found; none when nothing failed in the range
  int probes = 0;                 // bisection simulations
};

// After the grid: each variant's cliff to `resolution`, the cliff's spread over the variants, and the
// value to use: the worst variant's safe value less a margin (default: the larger of the knob's
// minimum margin and that spread), rounded to the resolution towards safety.
struct TuneAnswer {
  double resolution = 0;
  std::vector<VariantCliff> cliffs;
  std::optional<double> safe;    // the least aggressive of the variants' safe values
  std::optional<double> cliff;   // the least aggressive failing value over the variants
  double spread = 0;             // the variants' safe values: most minus least aggressive
  double margin = 0;
  bool margin_given = false;     // --margin, or the default rule
  std::optional<double> value;   // the answer; none when even the safest grid value failed
  std::string flag;              // the engine's own flag with it ("--gpu-memory-utilization 0.87"); "" for a policy parameter
  // The value the memory alone gives (the worst safe value less the margin). With an SLO the answer
  // must also meet it on the base variant: this value, checked by one more simulation, else the
  // most aggressive grid value on its safe side that met it, else none.
  std::optional<double> memory_value;
  bool checked = false;          // the answer's base run was simulated (an SLO, or asked for)
  std::optional<bool> slo_met, overloaded;  // that run's verdict (the grid's, for a grid value)
  std::string slo_note;          // why the answer is not memory_value, or why there is none
  std::optional<std::int64_t> kv_tokens;  // the answer's KV capacity on the base variant, when checked
};

// --resolution and --margin: nullopt takes the knob's default (a fraction: 0.005 and at least 0.01;
// other knobs: an eighth of the grid step and no minimum margin).
struct TuneBisection {
  std::optional<double> resolution;
  std::optional<double> margin;
};

struct TuneResult {
  KnobInfo knob;
  std::vector<StressVariant> variants;
  std::vector<TunePoint> frontier;  // by value, ascending
  std::optional<double> best;       // the most aggressive value with it and every safer value passing
  std::optional<double> first_failing;  // the next grid value past `best`
  bool monotone = true;             // no passing value beyond a failing one
  double step = 0;
  unsigned threads = 0;
  std::int64_t simulations = 0;
  double wall_s = 0;
  TuneAnswer answer;
};

// InputError "--resolution: ..." / "--margin: ..." for a value that is not a positive (resolution)
// or non-negative (margin) finite number.
void check_bisection(const TuneBisection& bisection);

// Every input of tune() checked before anything runs (the knob, the range, points, --resolution and
// --margin, and each grid value through the knob's setter and the engine's own checks): InputError
// naming the flag. Returns the grid's values.
std::vector<double> check_tune_inputs(const Scenario& scenario, const std::string& knob, double lo, double hi,
                                      int points, const TuneBisection& bisection);

// `check_answer`: simulate the answer on the base variant for its verdict even without an SLO (with
// one it always is). `progress` (may be null) gets the grid's simulations as its total, then the
// bisection's once the grid has placed each variant's cliff (an upper bound for a whole-number knob),
// then the answer's check, and counts each finished simulation.
TuneResult tune(const Scenario& scenario, const std::string& knob, double lo, double hi, int points,
                const std::vector<StressVariant>& variants, unsigned threads = 0, const TuneBisection& bisection = {},
                bool check_answer = false, Progress* progress = nullptr);

// Tuned jointly (`--with KNOB=V1,V2,...`): `knob`'s answer, as tune() finds it with its answer
// always checked on the base variant, at each value of a second knob. The answer is the pair with
// the most KV tokens of those whose answer is safe on every variant, not overloaded on the base
// variant and, with an SLO, meeting it; ties go to the more aggressive second value.
struct JointSlice {
  double with_value = 0;
  TuneResult result;
};
struct JointTuneResult {
  KnobInfo with;
  std::vector<JointSlice> slices;      // by the second knob's value, ascending
  std::optional<std::size_t> chosen;   // the slice of the answer; none when no pair qualifies
  std::vector<std::string> flags;      // the chosen pair as the engine's flags (or knob = value), second knob first
  std::int64_t simulations = 0;
  double wall_s = 0;
};
// "max_num_seqs=128,256,512": the knob (InputError "--with: ..." when it is `knob` itself, or not a
// knob of this scenario) and its values, each valid for it, distinct, at most 16; sorted ascending.
std::pair<std::string, std::vector<double>> parse_with(const Scenario& scenario, const std::string& knob,
                                                       const std::string& text);
JointTuneResult tune_jointly(const Scenario& scenario, const std::string& knob, double lo, double hi, int points,
                             const std::vector<StressVariant>& variants, const std::string& with_knob,
                             const std::vector<double>& with_values, unsigned threads = 0,
                             const TuneBisection& bisection = {}, Progress* progress = nullptr);

// The knob's value as the engine's command line takes it, or "" when the knob is not an engine's
// (a policy parameter has no flag).
std::string engine_flag(const Scenario& scenario, const std::string& knob, double value);

}  // namespace headroom::scenario
