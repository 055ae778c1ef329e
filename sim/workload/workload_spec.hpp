#pragma once
// A workload described as plain data: a trace file or a synthetic generator, the
// transformations applied to it, and the seed. The scenario layer fills it from YAML; every
// field below is named after its YAML key (see make_source.hpp for the shape).
#include <cstdint>
#include <optional>
#include <string>

#include "sim/workload/clip_to_context.hpp"
#include "sim/workload/file_lengths.hpp"
#include "sim/workload/request.hpp"
#include "sim/workload/trace_options.hpp"

namespace headroom::workload {

struct TraceSpec {
  std::string path;      // any format open_trace detects, except a length-only CSV
  TraceOptions options;  // sort, skip_bad_rows, keep_zero_output
};

enum class ArrivalKind { poisson, gamma, on_off };

struct ArrivalSpec {
  ArrivalKind process = ArrivalKind::poisson;
  double rate = 0;   // requests per second (on_off: during the on periods)
  double cv = 1;     // gamma: coefficient of variation of the gaps
  double on_s = 0;   // on_off: length of a burst
  double off_s = 0;  // on_off: silence after each burst
};

enum class LengthKind { fixed, uniform, lognormal, zipf };

struct LengthSpec {
  LengthKind dist = LengthKind::fixed;
  Tokens value = 0;           // fixed
  Tokens min = 1;             // uniform, lognormal, zipf
  std::optional<Tokens> max;  // uniform and zipf need it; lognormal: unbounded when empty
  double mean = 0;            // lognormal
  double cv = 1;              // lognormal
  double exponent = 1;        // zipf
};

struct LengthFileSpec {
  std::string path;
  LengthOrder order = LengthOrder::sequential;
  TraceOptions options;  // skip_bad_rows, keep_zero_output (sort does not apply)
};

struct SyntheticSpec {
  ArrivalSpec arrivals;
  // Either both distributions, or a file of (input, output) rows.
  std::optional<LengthSpec> input, output;
  std::optional<LengthFileSpec> lengths_file;
  std::optional<std::uint64_t> requests;
  std::optional<double> duration_s;
};

struct WindowSpec {
  double start_s = 0;
  std::optional<double> end_s;
};

struct ClipSpec {
  Tokens context = 0;
  ClipMode mode = ClipMode::truncate;
};

struct BurstSpec {
  double at_s = 0;
  double duration_s = 60;
  int factor = 2;  // each request in the window comes this many times
};

// Applied in this order: window, rate_scale, time_scale, burst, clip, max_requests.
struct TransformSpec {
  std::optional<WindowSpec> window;
  double rate_scale = 1;
  double time_scale = 1;
  std::optional<BurstSpec> burst;
  std::optional<ClipSpec> clip;
  std::optional<std::uint64_t> max_requests;
};

struct WorkloadSpec {
  std::optional<TraceSpec> trace;
  std::optional<SyntheticSpec> synthetic;
  TransformSpec transforms;
  std::uint64_t seed = 0;  // synthetic arrivals and lengths, thinning, sampling from a file
  bool allow_large = false;  // lifts the request and duration caps (workload_limits.hpp)
  std::string where;         // names a synthetic workload in errors (its scenario's file and key)
  std::string allow_large_how = "set workload.allow_large: true";  // how the caps' errors say to lift them
};

}  // namespace headroom::workload
