#include "sim/scenario/tune.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/did_you_mean.hpp"
#include "sim/core/error.hpp"
#include "sim/core/parallel.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/tunable_knobs.hpp"
#include "sim/policy/policy_parameters.hpp"
#include "sim/report/verdict.hpp"
#include "sim/scenario/outcome.hpp"
#include "sim/workload/make_source.hpp"

namespace headroom::scenario {

namespace {

// Each engine's memory fraction (engine_registry.hpp) and its whole-number knobs (tunable_knobs.hpp),
// then the policies' parameters.
const std::vector<KnobInfo>& knobs() {
  static const std::vector<KnobInfo> k = [] {
    std::vector<KnobInfo> v;
    for (const engine::EngineTraits* e : engine::engines()) {
      v.push_back({std::string(e->fraction_knob), true, "", true});
      // More requests or tokens in a step: more throughput, and more memory per step.
      for (const engine::WholeKnob& w : engine::whole_knobs())
        if (w.engine == e->id) v.push_back({std::string(w.knob), true, "", false, true});
    }
    // A larger share of the device is more aggressive; a larger buffer, margin or canary less so.
    for (const policy::PolicyParameter* p : policy::tunable_policy_parameters()) {
      const bool fraction = p->type == policy::ParameterType::fraction;
      v.push_back({std::string(p->knob), fraction, p->type == policy::ParameterType::bytes ? "MiB" : "", fraction});
    }
    return v;
  }();
  return k;
}

// This engine's own knobs: its fraction and its whole-number knobs.
std::vector<std::string> engine_knob_names(const engine::EngineTraits& e) {
  std::vector<std::string> names{std::string(e.fraction_knob)};
  for (const engine::WholeKnob& w : engine::whole_knobs())
    if (w.engine == e.id) names.emplace_back(w.knob);
  return names;
}

void require_engine(const Scenario& sc, const std::string& knob, const engine::EngineTraits& owner) {
  const engine::EngineTraits& mine = engine::engine_traits(sc.engine);
  if (mine.id != owner.id)
    throw InputError(fmt::format("--knob {}: a knob of {}, and this scenario's engine is {}{}; {}'s knobs are {}", knob,
                                 owner.name, mine.name, did_you_mean_suffix(knob, engine_knob_names(mine)), mine.name,
                                 fmt::join(engine_knob_names(mine), ", ")));
}

// The knob's parameter must be one the scenario's policy reads (policy_parameters.hpp).
void require_policy(const Scenario& sc, const std::string& knob, const policy::PolicyParameter& parameter) {
  if (policy::policy_reads(sc.policy.kind, parameter)) return;
  std::vector<std::string> names;
  for (std::string_view name : policy::policy_kind_names())
    if (policy::policy_reads(*policy::parse_policy_kind(name), parameter)) names.emplace_back(name);
  throw InputError(fmt::format("--knob {}: a parameter of the policy {}, and this scenario's policy is {} (set the "
                               "scenario's policy: key)",
                               knob, fmt::join(names, " or "), policy::policy_kind_name(sc.policy.kind)));
}

const policy::PolicyParameter* tunable_parameter(const std::string& knob) {
  for (const policy::PolicyParameter* p : policy::tunable_policy_parameters())
    if (p->knob == knob) return p;
  return nullptr;
}

}  // namespace

std::vector<std::string> knob_names() {
  std::vector<std::string> v;
  for (const KnobInfo& k : knobs()) v.push_back(k.name);
  return v;
}

KnobInfo knob_info(const Scenario& sc, const std::string& name) {
  for (const KnobInfo& k : knobs()) {
    if (k.name != name) continue;
    Scenario probe = sc;
    set_knob(probe, name, k.unit.empty() && !k.whole ? 0.5 : 1.0);  // throws when the knob does not apply
    return k;
  }
  throw InputError(fmt::format("--knob: unknown knob '{}'{}; expected one of {}", name,
                               did_you_mean_suffix(name, knob_names()), fmt::join(knob_names(), ", ")));
}

void set_knob(Scenario& sc, const std::string& name, double value) {
  auto fraction = [&](double v) {
    if (!(v > 0 && v <= 1)) throw InputError(fmt::format("--knob {}: {} is not a fraction in (0, 1]", name, v));
    return v;
  };
  auto mib = [&](double v) {
    if (!(v >= 0)) throw InputError(fmt::format("--knob {}: {} MiB is negative", name, v));
    return static_cast<Bytes>(std::llround(v * static_cast<double>(MiB)));
  };
  // An engine's own error about the knob names the command line's value (located()).
  if (const engine::EngineTraits* owner = engine::engine_with_fraction_knob(name)) {
    sc.engine_knob_place[name] = fmt::format("--knob {} = {}", name, value);
    require_engine(sc, name, *owner);
    owner->set_fraction(sc.engine, fraction(value));
  } else if (const engine::WholeKnob* w = engine::find_whole_knob(name)) {
    sc.engine_knob_place[name] = fmt::format("--knob {} = {}", name, value);
    require_engine(sc, name, engine::engine_traits(w->engine));
    // Past 2^53 a double holds no odd numbers; the engine's own limits (engine_limits.hpp) are far below.
    if (!(value >= 1 && value <= 9007199254740992.0 && value == std::floor(value)))
      throw InputError(fmt::format("--knob {}: {} is not a whole number of at least 1", name, value));
    w->set(sc.engine, static_cast<std::int64_t>(value));
  } else if (const policy::PolicyParameter* p = tunable_parameter(name)) {
    require_policy(sc, name, *p);
    switch (p->type) {
      case policy::ParameterType::fraction: policy::set_parameter_number(sc.policy, *p, fraction(value)); break;
      case policy::ParameterType::bytes: sc.policy.*std::get<Bytes policy::PolicySpec::*>(p->field) = mib(value); break;
      default:  // k, the one tunable plain number: at least 0
        if (!(value >= 0)) throw InputError(fmt::format("--knob {}: {} is negative", name, value));
        policy::set_parameter_number(sc.policy, *p, value);
    }
  } else {
    throw InputError(fmt::format("--knob: unknown knob '{}'{}; expected one of {}", name,
                                 did_you_mean_suffix(name, knob_names()), fmt::join(knob_names(), ", ")));
  }
}

std::string StressVariant::name() const {
  switch (kind) {
    case Kind::base: return "base";
    case Kind::rate: return fmt::format("rate:{}", value);
    case Kind::burst: return fmt::format("burst:{}", value);
    case Kind::seed: return fmt::format("seed:{}", value);
  }
  return "?";
}

std::vector<StressVariant> parse_stress(const std::string& text) {
  std::vector<StressVariant> out{StressVariant{}};
  if (text == "none" || text == "base") return out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item == "base") continue;
    const std::size_t colon = item.find(':');
    const std::string kind = item.substr(0, colon);
    StressVariant v;
    double value = 0;
    bool parsed = false;
    if (colon != std::string::npos) {
      try {
        std::size_t used = 0;
        value = std::stod(item.substr(colon + 1), &used);
        parsed = used == item.size() - colon - 1;
      } catch (const std::exception&) {
        parsed = false;
      }
    }
    if (kind == "rate" && parsed && value > 0) v = {StressVariant::Kind::rate, value};
    else if (kind == "burst" && parsed && value >= 2 && value == std::floor(value)) v = {StressVariant::Kind::burst, value};
    else if (kind == "seed" && parsed && value >= 1 && value == std::floor(value)) v = {StressVariant::Kind::seed, value};
    else
      throw InputError(fmt::format("--stress: '{}' is not a variant; expected base, rate:F (F > 0), burst:N (a whole "
                                   "N >= 2), seed:N (a whole N >= 1) or none, separated by commas",
                                   item));
    out.push_back(v);
    if (end == text.size()) break;
  }
  return out;
}

std::vector<StressVariant> default_stress(const Scenario& sc) {
  std::vector<StressVariant> v{StressVariant{}, {StressVariant::Kind::rate, 1.25}, {StressVariant::Kind::burst, 2}};
  if (sc.workload.synthetic) v.push_back({StressVariant::Kind::seed, 1});
  return v;
}

Scenario stressed(const Scenario& sc, const StressVariant& v, double duration_s) {
  Scenario s = sc;
  switch (v.kind) {
    case StressVariant::Kind::base: break;
    case StressVariant::Kind::rate: s.workload.transforms.rate_scale *= v.value; break;
    case StressVariant::Kind::burst: {
      workload::BurstSpec b;
      b.duration_s = std::min(60.0, std::max(duration_s / 10, 1e-3));
      b.at_s = std::max(0.0, duration_s / 2 - b.duration_s / 2);
      b.factor = static_cast<int>(v.value);
      s.workload.transforms.burst = b;
      break;
    }
    case StressVariant::Kind::seed: s.workload.seed += static_cast<std::uint64_t>(v.value); break;
  }
  return s;
}

void check_bisection(const TuneBisection& bisection) {
  if (bisection.resolution && !(*bisection.resolution > 0 && std::isfinite(*bisection.resolution)))
    throw InputError(fmt::format("--resolution: expected a number above 0, got {}", *bisection.resolution));
  if (bisection.margin && !(*bisection.margin >= 0 && std::isfinite(*bisection.margin)))
    throw InputError(fmt::format("--margin: expected a number of at least 0, got {}", *bisection.margin));
}

std::string engine_flag(const Scenario& sc, const std::string& knob, double value) {
  const engine::EngineTraits& mine = engine::engine_traits(sc.engine);
  if (knob == mine.fraction_knob) return fmt::format("{} {:g}", mine.fraction_flag, value);
  const engine::WholeKnob* w = engine::find_whole_knob(knob);
  if (!w || w->engine != mine.id) return "";
  return fmt::format("{} {}", engine::knob_flag_name(mine, knob), static_cast<std::int64_t>(value));
}

namespace {

// The answer on the base variant: its verdict, and with an SLO the answer must meet it (a value that
// misses it is not safe): else the most aggressive grid value on the answer's safe side, passing
// every variant, whose base run met it; else none.
void check_tune_answer(const Scenario& sc, const std::string& knob, TuneResult& result) {
  TuneAnswer& a = result.answer;
  Scenario s = sc;
  set_knob(s, knob, *a.value);
  s.on_oom = engine::OnOom::stop;
  const Outcome o = simulate(s, s.policy);
  ++result.simulations;
  a.checked = true;
  const report::Verdict judged = report::judge(o, sc.slo);
  a.slo_met = judged.slo_met;
  a.overloaded = judged.overloaded;
  a.kv_tokens = o.start.startup.kv_tokens;
  if (judged.slo_met != false) return;
  const std::string missed = fmt::format("{:.6g} misses the SLO ({})", *a.value, report::missed_slo(judged));
  const bool up = result.knob.higher_is_aggressive;
  const TunePoint* found = nullptr;
  for (const TunePoint& p : result.frontier) {
    const bool safe_side = up ? p.value <= *a.value : p.value >= *a.value;
    if (!safe_side || p.failed || p.slo_met != true) continue;
    if (!found || (up ? p.value > found->value : p.value < found->value)) found = &p;
  }
  if (!found) {
    a.slo_note = fmt::format("{}; no grid value on its safe side meets it", missed);
    a.value = std::nullopt;
    return;
  }
  a.slo_note = fmt::format("{}; {:.6g} is the most aggressive grid value on its safe side that meets it", missed,
                           found->value);
  a.value = found->value;
  a.kv_tokens = found->kv_tokens;
  a.slo_met = found->slo_met;
  a.overloaded = found->overloaded;
}

}  // namespace

namespace {

// The grid: `points` values evenly over [lo, hi]; for a whole-number knob rounded to whole numbers,
// each once.
std::vector<double> grid_values(const KnobInfo& k, double lo, double hi, int points) {
  if (lo == hi) points = 1;
  std::vector<double> values;
  for (int i = 0; i < points; ++i) {
    double v = points == 1 ? lo : lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(points - 1);
    if (k.whole) v = std::round(v);
    if (values.empty() || v != values.back()) values.push_back(v);
  }
  return values;
}

}  // namespace

std::vector<double> check_tune_inputs(const Scenario& sc, const std::string& knob, double lo, double hi, int points,
                                      const TuneBisection& bisection) {
  const KnobInfo k = knob_info(sc, knob);
  if (!(lo <= hi)) throw InputError(fmt::format("--range: LO {} is above HI {}", lo, hi));
  if (points < 1 || points > 100000) throw InputError(fmt::format("--points: expected 1 to 100000, got {}", points));
  check_bisection(bisection);
  if (k.whole) {
    auto whole = [](double v) { return v >= 1 && v == std::floor(v); };
    if (!whole(lo) || !whole(hi))
      throw InputError(fmt::format("--range: {} takes whole numbers of at least 1, got {}:{}", knob, lo, hi));
    if (bisection.resolution && !whole(*bisection.resolution))
      throw InputError(fmt::format("--resolution: {} takes whole numbers: expected a whole number of at least 1, got {}",
                                   knob, *bisection.resolution));
  }
  const std::vector<double> values = grid_values(k, lo, hi, points);
  // Every grid value through the setter, and for an engine knob through the engine's own checks
  // (its limits and cross-field rules: vLLM's max_num_batched_tokens >= max_num_seqs), before any run.
  for (double v : values) {
    Scenario s = sc;
    set_knob(s, knob, v);
    if (!k.whole) continue;
    try {
      check_engine(s);
    } catch (const InputError& e) {
      throw InputError(fmt::format("--range {:g}:{:g}: at {} = {:g}: {}", lo, hi, knob, v, e.what()));
    }
  }
  return values;
}

TuneResult tune(const Scenario& sc, const std::string& knob, double lo, double hi, int points,
                const std::vector<StressVariant>& variants, unsigned threads, const TuneBisection& bisection,
                bool check_answer, Progress* progress) {
  TuneResult result;
  result.knob = knob_info(sc, knob);
  const std::vector<double> values = check_tune_inputs(sc, knob, lo, hi, points, bisection);
  result.variants = variants;
  result.threads = worker_count(threads);
  const auto started_at = std::chrono::steady_clock::now();

  // The workload's span, for placing a burst: one pass over the source.
  double duration_s = 0;
  {
    auto source = workload::make_source(sc.workload);
    workload::Request r;
    while (source->next(r)) duration_s = r.arrival_s;
  }
  result.step = values.size() > 1 ? (hi - lo) / static_cast<double>(values.size() - 1) : 0;
  std::vector<Scenario> variant_scenarios;
  for (const StressVariant& v : variants) variant_scenarios.push_back(stressed(sc, v, duration_s));
  for (Scenario& s : variant_scenarios) set_knob(s, knob, values.front());  // bad values fail before any run

  const std::size_t jobs = values.size() * variants.size();
  if (progress) progress->add_total(jobs);
  std::vector<Outcome> outcomes(jobs);
  parallel_for(jobs, threads, [&](std::size_t j) {
    Scenario s = variant_scenarios[j % variants.size()];
    set_knob(s, knob, values[j / variants.size()]);
    s.on_oom = engine::OnOom::stop;
    outcomes[j] = simulate(s, s.policy);
    if (progress) progress->point_done();
  });
  result.simulations = static_cast<std::int64_t>(jobs);

  for (std::size_t i = 0; i < values.size(); ++i) {
    TunePoint p;
    p.value = values[i];
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const Outcome& o = outcomes[i * variants.size() + v];
      if (v == 0) {
        p.started = o.started();
        p.kv_tokens = o.start.startup.kv_tokens;  // decided even when a later start-up step failed
        if (o.ttft.count > 0) p.ttft_p99_s = o.ttft.p99;
        if (o.tpot.count > 0) p.tpot_p99_s = o.tpot.p99;
        p.preemptions = o.serving ? o.serving->preemptions : 0;
        const report::Verdict judged = report::judge(o, sc.slo);
        p.slo_met = judged.slo_met;
        p.overloaded = judged.overloaded;
      }
      if (o.failed() && !p.failed) {
        p.failed = true;
        p.failed_variant = variants[v].name();
        if (!o.started())
          p.failure = fmt::format("start-up failed at {}: {}", engine::startup_stage_name(o.start.startup.stage),
                                  o.start.startup.failure.substr(0, o.start.startup.failure.find(". ")));
        else
          p.failure = fmt::format("OOM at {:.1f} s allocating {}", o.serving->ooms.front().time_s,
                                  o.serving->ooms.front().tensor);
      }
    }
    if (p.failed) {
      p.ttft_p99_s = p.tpot_p99_s = std::nullopt;
      p.slo_met = p.overloaded = std::nullopt;
    }
    result.frontier.push_back(p);
  }
  // From the safest value towards the most aggressive: the last value before the first failure.
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = result.knob.higher_is_aggressive ? i : order.size() - 1 - i;
  bool seen_failure = false;
  for (std::size_t i : order) {
    const TunePoint& p = result.frontier[i];
    if (p.failed) {
      if (!seen_failure) result.first_failing = p.value;
      seen_failure = true;
    } else if (!seen_failure) {
      result.best = p.value;
    } else {
      result.monotone = false;
    }
  }

  // Bisection: each variant's cliff between its last passing and first failing grid value, to the
  // resolution, the variants in parallel (each bisection is sequential, so deterministic).
  TuneAnswer& a = result.answer;
  const bool up = result.knob.higher_is_aggressive;
  // A whole-number knob: an eighth of the grid step in whole numbers, at least 1.
  const double default_resolution = result.knob.fraction ? 0.005
                                    : result.knob.whole  ? std::max(1.0, std::floor(result.step / 8))
                                    : result.step > 0    ? result.step / 8
                                                         : 1;
  a.resolution = bisection.resolution.value_or(default_resolution);
  a.cliffs.resize(variants.size());
  const double within = a.resolution * (1 + 1e-9);  // not 0.0050000000000000044
  std::size_t probes = 0;  // the bisection's simulations, for the progress line: each halves the gap
  for (std::size_t v = 0; v < variants.size(); ++v) {
    VariantCliff& c = a.cliffs[v];
    c.variant = variants[v].name();
    for (std::size_t i : order) {
      if (outcomes[i * variants.size() + v].failed()) {
        c.failing = values[i];
        break;
      }
      c.safe = values[i];
    }
    // Whole numbers: at most the larger half each time, so the count is an upper bound there.
    if (c.safe && c.failing)
      for (double gap = std::abs(*c.failing - *c.safe); gap > within; gap = result.knob.whole ? std::ceil(gap / 2) : gap / 2)
        ++probes;
  }
  if (progress) progress->add_total(probes);
  parallel_for(variants.size(), threads, [&](std::size_t v) {
    VariantCliff& c = a.cliffs[v];
    while (c.safe && c.failing && std::abs(*c.failing - *c.safe) > within) {
      // Whole numbers: the gap is above the resolution (at least 1), so at least 2, and the floor of
      // the middle lies strictly inside it.
      const double mid = result.knob.whole ? std::floor((*c.safe + *c.failing) / 2)
                                            : std::round((*c.safe + *c.failing) / 2 * 1e9) / 1e9;  // 0.96625, not 0.9662499999999999
      Scenario s = variant_scenarios[v];
      set_knob(s, knob, mid);
      s.on_oom = engine::OnOom::stop;
      ++c.probes;
      (simulate(s, s.policy).failed() ? c.failing : c.safe) = mid;
      if (progress) progress->point_done();
    }
  });
  auto less_aggressive = [&](double x, double y) { return up ? x < y : x > y; };
  bool every_safe = true;
  std::optional<double> most;
  for (const VariantCliff& c : a.cliffs) {
    result.simulations += c.probes;
    if (!c.safe) every_safe = false;
    if (c.safe && (!a.safe || less_aggressive(*c.safe, *a.safe))) a.safe = c.safe;
    if (c.failing && (!a.cliff || less_aggressive(*c.failing, *a.cliff))) a.cliff = c.failing;
    // The spread over the variants that found a cliff: how far the stressed traffic moves it.
    if (c.safe && c.failing && (!most || less_aggressive(*most, *c.safe))) most = c.safe;
  }
  std::optional<double> least;
  for (const VariantCliff& c : a.cliffs)
    if (c.safe && c.failing && (!least || less_aggressive(*c.safe, *least))) least = c.safe;
  a.spread = most && least ? std::abs(*most - *least) : 0;
  a.margin_given = bisection.margin.has_value();
  a.margin = bisection.margin.value_or(std::max(result.knob.fraction ? 0.01 : 0.0, a.spread));
  if (every_safe && a.safe) {
    // Below the cliff by the margin, onto the resolution's grid towards safety (none past the cliff:
    // with no failure in the range the margin still applies to the most aggressive value tried).
    // A whole-number knob: to a whole number, not onto the resolution's grid (608 rather than 576).
    const double target = up ? *a.safe - a.margin : *a.safe + a.margin;
    const double unit = result.knob.whole ? 1.0 : a.resolution;
    const double steps = target / unit;
    double snapped = (up ? std::floor(steps + 1e-9) : std::ceil(steps - 1e-9)) * unit;
    snapped = std::round(snapped * 1e9) / 1e9;  // 0.87 rather than 0.87000000000000011
    // Below a whole-number knob's smallest setting, or outside (0, 1] for a fraction: no answer.
    if (result.knob.whole ? snapped >= 1 : !result.knob.fraction || (snapped > 0 && snapped <= 1)) a.value = snapped;
  }
  a.memory_value = a.value;
  if (a.value && (check_answer || sc.slo.any())) {
    if (progress) progress->add_total(1);
    check_tune_answer(sc, knob, result);
    if (progress) progress->point_done();
  }
  if (a.value) a.flag = engine_flag(sc, knob, *a.value);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at).count();
  return result;
}

namespace {

// An error of the knob's setter as --with's: "--knob X: ..." reads "--with X: ...".
InputError as_with(const InputError& e, const std::string& place) {
  const std::string what = e.what();
  if (what.starts_with("--knob")) return InputError("--with" + what.substr(6));
  return InputError(fmt::format("{}: {}", place, what));
}

}  // namespace

std::pair<std::string, std::vector<double>> parse_with(const Scenario& sc, const std::string& knob,
                                                       const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw InputError(fmt::format("--with: '{}' is not KNOB=V1,V2,..., e.g. max_num_seqs=128,256,512", text));
  const std::string with = text.substr(0, eq);
  if (with == knob) throw InputError(fmt::format("--with: {} is the knob tuned (--knob); name a second knob", with));
  try {
    knob_info(sc, with);
  } catch (const InputError& e) {
    throw as_with(e, "--with");
  }
  std::vector<double> values;
  std::size_t start = eq + 1;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    double v = 0;
    bool parsed = false;
    try {
      std::size_t used = 0;
      v = std::stod(item, &used);
      parsed = used == item.size() && std::isfinite(v);
    } catch (const std::exception&) {
      parsed = false;
    }
    if (!parsed) throw InputError(fmt::format("--with {}: '{}' is not a number", with, item));
    Scenario s = sc;
    try {
      set_knob(s, with, v);
      check_engine(s);
    } catch (const InputError& e) {
      throw as_with(e, fmt::format("--with {}={}", with, item));
    }
    if (std::find(values.begin(), values.end(), v) != values.end())
      throw InputError(fmt::format("--with {}: {} is listed twice", with, item));
    values.push_back(v);
    start = end + 1;
    if (end == text.size()) break;
  }
  // A small grid: each value is a whole tune of the first knob.
  if (values.size() > 16) throw InputError(fmt::format("--with {}: {} values; at most 16", with, values.size()));
  std::sort(values.begin(), values.end());
  return {with, values};
}

JointTuneResult tune_jointly(const Scenario& sc, const std::string& knob, double lo, double hi, int points,
                             const std::vector<StressVariant>& variants, const std::string& with_knob,
                             const std::vector<double>& with_values, unsigned threads, const TuneBisection& bisection,
                             Progress* progress) {
  JointTuneResult joint;
  joint.with = knob_info(sc, with_knob);
  const auto started_at = std::chrono::steady_clock::now();
  for (double w : with_values) {
    Scenario s = sc;
    set_knob(s, with_knob, w);
    check_engine(s);
    joint.slices.push_back({w, tune(s, knob, lo, hi, points, variants, threads, bisection, true, progress)});
    joint.simulations += joint.slices.back().result.simulations;
  }
  // The most KV tokens of the qualifying pairs: the first knob buys KV capacity, and the second's
  // throughput is judged by the verdict (a batch too small to keep up is overloaded or misses the SLO).
  const bool up = joint.with.higher_is_aggressive;
  for (std::size_t i = 0; i < joint.slices.size(); ++i) {
    const TuneAnswer& a = joint.slices[i].result.answer;
    if (!a.value || !a.kv_tokens || a.slo_met == false || a.overloaded == true) continue;
    if (!joint.chosen) {
      joint.chosen = i;
      continue;
    }
    const JointSlice& best = joint.slices[*joint.chosen];
    const std::int64_t kv = *best.result.answer.kv_tokens;
    const bool more_aggressive = up ? joint.slices[i].with_value > best.with_value : joint.slices[i].with_value < best.with_value;
    if (*a.kv_tokens > kv || (*a.kv_tokens == kv && more_aggressive)) joint.chosen = i;
  }
  if (joint.chosen) {
    const JointSlice& c = joint.slices[*joint.chosen];
    for (const auto& [name, value] : {std::pair{with_knob, c.with_value}, std::pair{knob, *c.result.answer.value}}) {
      const std::string flag = engine_flag(sc, name, value);
      joint.flags.push_back(flag.empty() ? fmt::format("{} = {:.6g}", name, value) : flag);
    }
  }
  joint.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at).count();
  return joint;
}

}  // namespace headroom::scenario
