#include "sim/scenario/workload_yaml.hpp"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/workload/field_parse.hpp"
#include "sim/workload/workload_limits.hpp"

namespace headroom::scenario {

namespace {

using workload::Tokens;

// Up to the workload layer's own bound, so that its checks never fire without the file's place.
Tokens tokens(const YamlSection& s, std::string_view key, Tokens lo) {
  return static_cast<Tokens>(s.integer(key, s.required(key), lo, workload::kMaxTokenCount));
}

// A number within the hard limits of workload_limits.hpp (beyond them times stop being times).
double within(const YamlSection& s, std::string_view key, double value, double lo, double hi, std::string_view unit) {
  if (!(value >= lo && value <= hi))
    s.fail(s.value(key), key,
           fmt::format("expected {} from {:g} to {:g} (docs/limits.md), got {}", unit, lo, hi, s.scalar(key, s.value(key))));
  return value;
}
double rate(const YamlSection& s, std::string_view key) {
  return within(s, key, s.positive(key), workload::limits::kMinRate, workload::limits::kMaxRate,
                "a rate in requests per second");
}
double factor(const YamlSection& s, std::string_view key) {
  return within(s, key, s.positive(key), workload::limits::kMinRate, workload::limits::kMaxRate, "a factor");
}
double seconds(const YamlSection& s, std::string_view key, bool allow_zero) {
  return within(s, key, s.number(key, s.required(key), allow_zero), 0, workload::limits::kMaxArrivalS,
                "a number of seconds");
}
double cv(const YamlSection& s, std::string_view key) {
  return within(s, key, s.positive(key), 0, workload::limits::kMaxCv, "a coefficient of variation");
}
// A size cap of workload_limits.hpp: refused unless the workload says allow_large.
[[noreturn]] void too_large(const YamlSection& s, std::string_view key, const std::string& what) {
  s.fail(s.value(key), key,
         fmt::format("{} for one workload (docs/limits.md); set workload.allow_large: true to run it anyway", what));
}

// min <= max, named at max.
void check_min_max(const YamlSection& s, const workload::LengthSpec& l) {
  if (l.max && l.min > *l.max)
    s.fail(s.value("max"), "max", fmt::format("expected at least min ({}), got {}", l.min, *l.max));
}

std::optional<Tokens> optional_tokens(const YamlSection& s, std::string_view key, Tokens lo) {
  if (!s.present(key)) return std::nullopt;
  return tokens(s, key, lo);
}

void read_trace_options(const YamlSection& s, workload::TraceOptions& o, bool allow_sort) {
  if (allow_sort) s.optional_bool("sort", o.sort);
  s.optional_bool("skip_bad_rows", o.skip_bad_rows);
  s.optional_bool("keep_zero_output", o.keep_zero_output);
}

workload::LengthSpec read_length(const YamlSection& s) {
  workload::LengthSpec l;
  std::string dist = s.choice("dist", {"fixed", "uniform", "lognormal", "zipf"});
  if (dist == "fixed") {
    s.check_keys({"dist", "value"});
    l.dist = workload::LengthKind::fixed;
    l.value = tokens(s, "value", 1);
  } else if (dist == "uniform") {
    s.check_keys({"dist", "min", "max"});
    l.dist = workload::LengthKind::uniform;
    l.min = tokens(s, "min", 1);
    l.max = tokens(s, "max", 1);
  } else if (dist == "lognormal") {
    s.check_keys({"dist", "mean", "cv", "min", "max"});
    l.dist = workload::LengthKind::lognormal;
    l.mean = within(s, "mean", s.positive("mean"), 0, static_cast<double>(workload::kMaxTokenCount), "a number of tokens");
    if (s.present("cv")) l.cv = cv(s, "cv");
    if (auto v = optional_tokens(s, "min", 1)) l.min = *v;
    l.max = optional_tokens(s, "max", 1);
  } else {
    s.check_keys({"dist", "min", "max", "exponent"});
    l.dist = workload::LengthKind::zipf;
    if (auto v = optional_tokens(s, "min", 1)) l.min = *v;
    l.max = tokens(s, "max", 1);
    s.optional_number("exponent", l.exponent);
  }
  check_min_max(s, l);
  return l;
}

// A FIFO, device or socket fails here, naming the key, rather than blocking the run that opens it.
void refuse_special_input(const YamlSection& s, const std::string& path, std::string_view what) {
  try {
    refuse_special_file(path, what);
  } catch (const InputError& e) {
    s.fail(s.value("path"), "path", e.what());
  }
}

}  // namespace

namespace {
constexpr std::string_view kDataVariable = "$HEADROOM_DATA";
constexpr std::string_view kDefaultDataRoot = "../shared/traces";
}  // namespace

std::string resolve_data_path(std::string_view path, const std::filesystem::path& relative_to) {
  std::string p(path);
  if (p.starts_with(kDataVariable)) {
    const char* env = std::getenv("HEADROOM_DATA");
    std::string root = env && *env ? env : std::string(kDefaultDataRoot);
    return root + p.substr(kDataVariable.size());
  }
  std::filesystem::path fp(p);
  if (fp.is_relative() && !relative_to.empty()) return (relative_to / fp).lexically_normal().string();
  return p;
}

void require_data_file(const YamlSection& s, std::string_view key, std::string_view written,
                       const std::string& resolved) {
  if (!written.starts_with(kDataVariable)) return;
  std::error_code ec;
  if (std::filesystem::exists(resolved, ec)) return;
  const char* env = std::getenv("HEADROOM_DATA");
  const std::string value =
      env && *env ? fmt::format("HEADROOM_DATA is '{}'", env)
                  : fmt::format("HEADROOM_DATA is not set, so it is '{}' from the folder headroom runs in, {}",
                                kDefaultDataRoot, std::filesystem::current_path(ec).string());
  throw InputError(fmt::format(
      "{}: key '{}': {}: no such file ({}). The public traces are not part of headroom: the README, section "
      "\"Public traces and HEADROOM_DATA\", says where to get them and how to point HEADROOM_DATA at them",
      s.where(s.value(key)), s.key_path(key), resolved, value));
}

namespace {

// The file a section's `path` names, resolved, and checked where a missing data file or a FIFO
// would otherwise fail later, far from the key: both errors name it.
std::string input_path(const YamlSection& s, std::string_view what, const std::filesystem::path& relative_to) {
  const std::string written = s.text("path");
  std::string path = resolve_data_path(written, relative_to);
  require_data_file(s, "path", written, path);
  refuse_special_input(s, path, what);
  return path;
}

}  // namespace

workload::WorkloadSpec read_workload(const YamlSection& s, const std::filesystem::path& relative_to) {
  s.check_keys({"seed", "trace", "synthetic", "transforms", "allow_large"});
  workload::WorkloadSpec w;
  s.optional_bool("allow_large", w.allow_large);
  if (s.present("seed")) w.seed = static_cast<std::uint64_t>(s.integer("seed", s.value("seed"), 0, INT64_MAX));
  if (s.present("trace") == s.present("synthetic"))
    throw InputError(fmt::format("{}: key '{}': give exactly one of 'trace' or 'synthetic'", s.where(s.node()),
                                 s.key_path("trace")));
  if (s.present("trace")) {
    YamlSection t = s.child("trace");
    t.check_keys({"path", "sort", "skip_bad_rows", "keep_zero_output"});
    workload::TraceSpec trace;
    trace.path = input_path(t, "trace", relative_to);
    read_trace_options(t, trace.options, true);
    w.trace = trace;
  } else {
    YamlSection y = s.child("synthetic");
    w.where = fmt::format("{}: key '{}'", y.where(y.node()), s.key_path("synthetic"));
    y.check_keys({"requests", "duration_s", "arrivals", "input", "output", "lengths_file"});
    workload::SyntheticSpec syn;
    if (y.present("requests")) {
      syn.requests = static_cast<std::uint64_t>(y.integer("requests", y.value("requests"), 1, INT64_MAX));
      if (*syn.requests > workload::limits::kMaxRequests && !w.allow_large)
        too_large(y, "requests", fmt::format("{} requests are above the limit of {}", *syn.requests,
                                             workload::limits::kMaxRequests));
    }
    if (y.present("duration_s")) {
      syn.duration_s = within(y, "duration_s", y.positive("duration_s"), 0, workload::limits::kMaxArrivalS,
                              "a number of seconds");
      if (*syn.duration_s > workload::limits::kMaxDurationS && !w.allow_large)
        too_large(y, "duration_s", fmt::format("{:g} s is above the limit of {:.0f} s (30 days)", *syn.duration_s,
                                               workload::limits::kMaxDurationS));
    }
    YamlSection a = y.child("arrivals");
    std::string process = a.choice("process", {"poisson", "gamma", "on_off"});
    if (process == "poisson") {
      a.check_keys({"process", "rate"});
      syn.arrivals.process = workload::ArrivalKind::poisson;
    } else if (process == "gamma") {
      a.check_keys({"process", "rate", "cv"});
      syn.arrivals.process = workload::ArrivalKind::gamma;
      syn.arrivals.cv = cv(a, "cv");
    } else {
      a.check_keys({"process", "rate", "on_s", "off_s"});
      syn.arrivals.process = workload::ArrivalKind::on_off;
      syn.arrivals.on_s = seconds(a, "on_s", false);
      syn.arrivals.off_s = seconds(a, "off_s", true);
    }
    syn.arrivals.rate = rate(a, "rate");
    // Only a duration bounds it: the requests it would bring, on average.
    if (syn.duration_s && !syn.requests && !w.allow_large) {
      const workload::ArrivalSpec& ar = syn.arrivals;
      const double on_share = ar.process == workload::ArrivalKind::on_off ? ar.on_s / (ar.on_s + ar.off_s) : 1.0;
      const double expected = ar.rate * on_share * *syn.duration_s;
      if (expected > static_cast<double>(workload::limits::kMaxRequests))
        too_large(y, "duration_s",
                  fmt::format("{:g} s at {:g} requests per second bring about {:.0f} requests, above the limit of {}",
                              *syn.duration_s, ar.rate, expected, workload::limits::kMaxRequests));
    }
    if (y.present("lengths_file")) {
      if (y.present("input") || y.present("output"))
        throw InputError(fmt::format("{}: key '{}': give either 'lengths_file' or 'input' and 'output'",
                                     y.where(y.value("lengths_file")), y.key_path("lengths_file")));
      YamlSection f = y.child("lengths_file");
      f.check_keys({"path", "order", "skip_bad_rows", "keep_zero_output"});
      workload::LengthFileSpec lf;
      lf.path = input_path(f, "lengths file", relative_to);
      if (f.present("order"))
        lf.order = f.choice("order", {"sequential", "sample"}) == "sample" ? workload::LengthOrder::sample
                                                                         : workload::LengthOrder::sequential;
      read_trace_options(f, lf.options, false);
      syn.lengths_file = lf;
    } else {
      syn.input = read_length(y.child("input"));
      syn.output = read_length(y.child("output"));
    }
    w.synthetic = syn;
  }
  if (s.present("transforms")) {
    YamlSection t = s.child("transforms");
    t.check_keys({"window", "rate_scale", "time_scale", "burst", "clip", "max_requests"});
    if (t.present("window")) {
      YamlSection win = t.child("window");
      win.check_keys({"start_s", "end_s"});
      workload::WindowSpec ws;
      if (win.present("start_s")) ws.start_s = seconds(win, "start_s", true);
      if (win.present("end_s")) ws.end_s = seconds(win, "end_s", false);
      if (ws.end_s && *ws.end_s <= ws.start_s)
        win.fail(win.value("end_s"), "end_s", fmt::format("expected a time after start_s ({}), got {}", ws.start_s, *ws.end_s));
      w.transforms.window = ws;
    }
    if (t.present("rate_scale")) w.transforms.rate_scale = factor(t, "rate_scale");
    if (t.present("time_scale")) w.transforms.time_scale = factor(t, "time_scale");
    if (t.present("burst")) {
      YamlSection b = t.child("burst");
      b.check_keys({"at_s", "duration_s", "factor"});
      workload::BurstSpec bs;
      bs.at_s = seconds(b, "at_s", true);
      if (b.present("duration_s")) bs.duration_s = seconds(b, "duration_s", false);
      if (b.present("factor")) bs.factor = static_cast<int>(b.integer("factor", b.value("factor"), 2, 1000));
      w.transforms.burst = bs;
    }
    if (t.present("clip")) {
      YamlSection c = t.child("clip");
      c.check_keys({"context", "mode"});
      workload::ClipSpec cs;
      cs.context = tokens(c, "context", 2);
      if (c.present("mode"))
        cs.mode = c.choice("mode", {"truncate", "drop"}) == "drop" ? workload::ClipMode::drop : workload::ClipMode::truncate;
      w.transforms.clip = cs;
    }
    if (t.present("max_requests"))
      w.transforms.max_requests = static_cast<std::uint64_t>(t.integer("max_requests", t.value("max_requests"), 1, INT64_MAX));
  }
  return w;
}

}  // namespace headroom::scenario
