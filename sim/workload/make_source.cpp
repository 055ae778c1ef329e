#include "sim/workload/make_source.hpp"

#include "sim/core/error.hpp"
#include "sim/workload/field_parse.hpp"
#include "sim/workload/fixed_length.hpp"
#include "sim/workload/gamma_arrivals.hpp"
#include "sim/workload/independent_lengths.hpp"
#include "sim/workload/lognormal_length.hpp"
#include "sim/workload/burst.hpp"
#include "sim/workload/limited_source.hpp"
#include "sim/workload/max_requests.hpp"
#include "sim/workload/on_off_arrivals.hpp"
#include "sim/workload/open_trace.hpp"
#include "sim/workload/poisson_arrivals.hpp"
#include "sim/workload/rate_scale.hpp"
#include "sim/workload/synthetic_source.hpp"
#include "sim/workload/time_scale.hpp"
#include "sim/workload/time_window.hpp"
#include "sim/workload/uniform_length.hpp"
#include "sim/workload/zipf_length.hpp"

namespace headroom::workload {

namespace {

std::unique_ptr<ArrivalProcess> make_arrivals(const ArrivalSpec& a) {
  switch (a.process) {
    case ArrivalKind::poisson: return std::make_unique<PoissonArrivals>(a.rate);
    case ArrivalKind::gamma: return std::make_unique<GammaArrivals>(a.rate, a.cv);
    case ArrivalKind::on_off: return std::make_unique<OnOffArrivals>(a.rate, a.on_s, a.off_s);
  }
  throw InputError("synthetic.arrivals: unknown process");
}

std::unique_ptr<LengthDistribution> make_length(const LengthSpec& l, const char* which) {
  auto need_max = [&]() {
    if (!l.max) throw InputError(std::string("synthetic.") + which + ": this distribution needs max");
    return *l.max;
  };
  switch (l.dist) {
    case LengthKind::fixed: return std::make_unique<FixedLength>(l.value);
    case LengthKind::uniform: return std::make_unique<UniformLength>(l.min, need_max());
    case LengthKind::lognormal: return std::make_unique<LognormalLength>(l.mean, l.cv, l.min, l.max.value_or(kMaxTokenCount));
    case LengthKind::zipf: return std::make_unique<ZipfLength>(l.min, need_max(), l.exponent);
  }
  throw InputError(std::string("synthetic.") + which + ": unknown distribution");
}

std::unique_ptr<RequestSource> make_synthetic(const SyntheticSpec& s, std::uint64_t seed) {
  std::unique_ptr<LengthModel> lengths;
  if (s.lengths_file) {
    if (s.input || s.output) throw InputError("synthetic: give input and output distributions or lengths_file, not both");
    lengths = std::make_unique<FileLengths>(s.lengths_file->path, s.lengths_file->order, s.lengths_file->options);
  } else {
    if (!s.input || !s.output) throw InputError("synthetic: give both input and output length distributions, or lengths_file");
    lengths = std::make_unique<IndependentLengths>(make_length(*s.input, "input"), make_length(*s.output, "output"));
  }
  return std::make_unique<SyntheticSource>(make_arrivals(s.arrivals), std::move(lengths),
                                           SyntheticLimits{s.requests, s.duration_s}, seed);
}

}  // namespace

std::unique_ptr<RequestSource> make_source(const WorkloadSpec& spec) {
  if (spec.trace && spec.synthetic) throw InputError("workload: give either trace or synthetic, not both");
  std::unique_ptr<RequestSource> source;
  if (spec.trace) {
    auto reader = open_trace(spec.trace->path, spec.trace->options);
    if (!reader->has_arrival_times())
      throw InputError(reader->file() + ": a length-only file has no arrival times; use it as "
                       "synthetic.lengths_file with an arrival process");
    source = std::move(reader);
  } else if (spec.synthetic) {
    source = make_synthetic(*spec.synthetic, spec.seed);
  } else {
    throw InputError("workload: give a trace or a synthetic workload");
  }
  const TransformSpec& t = spec.transforms;
  if (t.window) source = std::make_unique<TimeWindow>(std::move(source), t.window->start_s, t.window->end_s);
  if (t.rate_scale != 1.0) source = std::make_unique<RateScale>(std::move(source), t.rate_scale, spec.seed);
  if (t.time_scale != 1.0) source = std::make_unique<TimeScale>(std::move(source), t.time_scale);
  if (t.burst) source = std::make_unique<Burst>(std::move(source), t.burst->at_s, t.burst->duration_s, t.burst->factor);
  if (t.clip) source = std::make_unique<ClipToContext>(std::move(source), t.clip->context, t.clip->mode);
  if (t.max_requests) source = std::make_unique<MaxRequests>(std::move(source), *t.max_requests);
  return std::make_unique<LimitedSource>(std::move(source), spec.trace ? spec.trace->path
                                         : spec.where.empty() ? "synthetic workload" : spec.where,
                                         spec.allow_large, spec.allow_large_how);
}

}  // namespace headroom::workload
