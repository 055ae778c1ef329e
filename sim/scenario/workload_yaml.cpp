#include "sim/scenario/workload_yaml.hpp"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/workload/field_parse.hpp"

namespace headroom::scenario {

namespace {

using workload::Tokens;

// Up to the workload layer's own bound, so that its checks never fire without the file's place.
Tokens tokens(const YamlSection& s, std::string_view key, Tokens lo) {
  return static_cast<Tokens>(s.integer(key, s.required(key), lo, workload::kMaxTokenCount));
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
    l.mean = s.positive("mean");
    s.optional_number("cv", l.cv);
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

std::string resolve_data_path(std::string_view path, const std::filesystem::path& relative_to) {
  static constexpr std::string_view kData = "$HEADROOM_DATA";
  std::string p(path);
  if (p.rfind(kData, 0) == 0) {
    const char* env = std::getenv("HEADROOM_DATA");
    std::string root = env && *env ? env : "../shared/traces";
    return root + p.substr(kData.size());
  }
  std::filesystem::path fp(p);
  if (fp.is_relative() && !relative_to.empty()) return (relative_to / fp).lexically_normal().string();
  return p;
}

workload::WorkloadSpec read_workload(const YamlSection& s, const std::filesystem::path& relative_to) {
  s.check_keys({"seed", "trace", "synthetic", "transforms"});
  workload::WorkloadSpec w;
  if (s.present("seed")) w.seed = static_cast<std::uint64_t>(s.integer("seed", s.value("seed"), 0, INT64_MAX));
  if (s.present("trace") == s.present("synthetic"))
    throw InputError(fmt::format("{}: key '{}': give exactly one of 'trace' or 'synthetic'", s.where(s.node()),
                                 s.key_path("trace")));
  if (s.present("trace")) {
    YamlSection t = s.child("trace");
    t.check_keys({"path", "sort", "skip_bad_rows", "keep_zero_output"});
    workload::TraceSpec trace;
    trace.path = resolve_data_path(t.text("path"), relative_to);
    refuse_special_input(t, trace.path, "trace");
    read_trace_options(t, trace.options, true);
    w.trace = trace;
  } else {
    YamlSection y = s.child("synthetic");
    y.check_keys({"requests", "duration_s", "arrivals", "input", "output", "lengths_file"});
    workload::SyntheticSpec syn;
    if (y.present("requests"))
      syn.requests = static_cast<std::uint64_t>(y.integer("requests", y.value("requests"), 1, INT64_MAX));
    if (y.present("duration_s")) syn.duration_s = y.positive("duration_s");
    YamlSection a = y.child("arrivals");
    std::string process = a.choice("process", {"poisson", "gamma", "on_off"});
    if (process == "poisson") {
      a.check_keys({"process", "rate"});
      syn.arrivals.process = workload::ArrivalKind::poisson;
    } else if (process == "gamma") {
      a.check_keys({"process", "rate", "cv"});
      syn.arrivals.process = workload::ArrivalKind::gamma;
      syn.arrivals.cv = a.positive("cv");
    } else {
      a.check_keys({"process", "rate", "on_s", "off_s"});
      syn.arrivals.process = workload::ArrivalKind::on_off;
      syn.arrivals.on_s = a.positive("on_s");
      syn.arrivals.off_s = a.number("off_s", a.required("off_s"), true);
    }
    syn.arrivals.rate = a.positive("rate");
    if (y.present("lengths_file")) {
      if (y.present("input") || y.present("output"))
        throw InputError(fmt::format("{}: key '{}': give either 'lengths_file' or 'input' and 'output'",
                                     y.where(y.value("lengths_file")), y.key_path("lengths_file")));
      YamlSection f = y.child("lengths_file");
      f.check_keys({"path", "order", "skip_bad_rows", "keep_zero_output"});
      workload::LengthFileSpec lf;
      lf.path = resolve_data_path(f.text("path"), relative_to);
      refuse_special_input(f, lf.path, "lengths file");
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
      win.optional_number("start_s", ws.start_s, true);
      if (win.present("end_s")) ws.end_s = win.positive("end_s");
      if (ws.end_s && *ws.end_s <= ws.start_s)
        win.fail(win.value("end_s"), "end_s", fmt::format("expected a time after start_s ({}), got {}", ws.start_s, *ws.end_s));
      w.transforms.window = ws;
    }
    t.optional_number("rate_scale", w.transforms.rate_scale);
    t.optional_number("time_scale", w.transforms.time_scale);
    if (t.present("burst")) {
      YamlSection b = t.child("burst");
      b.check_keys({"at_s", "duration_s", "factor"});
      workload::BurstSpec bs;
      bs.at_s = b.number("at_s", b.required("at_s"), true);
      if (b.present("duration_s")) bs.duration_s = b.positive("duration_s");
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
