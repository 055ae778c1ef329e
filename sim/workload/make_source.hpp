#pragma once
// Builds the request source a WorkloadSpec describes. In YAML (mapped by the scenario layer):
//
//   workload:
//     seed: 42
//     trace: {path: azure2023_code.csv, sort: false, skip_bad_rows: false, keep_zero_output: false}
//     # or, instead of trace:
//     synthetic:
//       requests: 10000                 # and/or duration_s: 600
//       arrivals: {process: gamma, rate: 5.0, cv: 3.0}   # poisson {rate} | on_off {rate, on_s, off_s}
//       input:  {dist: lognormal, mean: 1200, cv: 1.0, min: 1, max: 32768}
//       output: {dist: zipf, min: 1, max: 2048, exponent: 1.2}  # fixed {value} | uniform {min, max}
//       # or, instead of input/output: lengths_file: {path: sharegpt.csv, order: sample}
//     transforms:
//       window: {start_s: 600, end_s: 1200}
//       rate_scale: 0.5
//       time_scale: 1.0
//       clip: {context: 8192, mode: truncate}  # or drop
//       max_requests: 5000
#include <memory>

#include "sim/workload/request_source.hpp"
#include "sim/workload/workload_spec.hpp"

namespace headroom::workload {

// Throws InputError for an inconsistent spec or a parameter out of range, and what open_trace
// throws for the file.
std::unique_ptr<RequestSource> make_source(const WorkloadSpec& spec);

}  // namespace headroom::workload
