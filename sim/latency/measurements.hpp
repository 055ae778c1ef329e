#pragma once
// The measurement file the calibration program (kernels/headroom-calibrate) writes beside a
// measured GPU profile, and `headroom fit` reads: one timed operation per CSV row.
//
//   # headroom measurements v1        <- required first line; other '#' lines are comments
//   kind,label,flops,bytes,rows,seconds
//   gemm,m=2048 n=6144 k=4096,1.0307921510e+11,79691776,2048,1.3e-04
//
// kind     gemm | attention | stream (the kernels the latency fit uses: fit.hpp MeasuredKernel)
//          | malloc | free | release_cached (allocator-facing driver costs, recorded, not fitted)
// label    what was run, for people (no commas)
// flops    floating-point operations (0 for stream and driver rows)
// bytes    bytes moved to and from HBM; for malloc/free the allocation size; for release_cached
//          the bytes released
// rows     GEMM M (rows each weight element multiplies); 0 for other kinds
// seconds  median time of one run
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sim/latency/fit.hpp"

namespace headroom::latency {

enum class MeasurementKind { gemm, attention, stream, malloc, free, release_cached };
std::string_view measurement_kind_name(MeasurementKind kind);

struct Measurement {
  MeasurementKind kind = MeasurementKind::gemm;
  std::string label;
  double flops = 0;
  double bytes = 0;
  double rows = 0;
  double seconds = 0;
  int line = 0;  // 1-based line in the file, for messages
};

inline constexpr std::string_view kMeasurementsHeader = "# headroom measurements v1";
inline constexpr std::string_view kMeasurementsColumns = "kind,label,flops,bytes,rows,seconds";

// Throws InputError "<file>:<line>: column N (name): expected ..." for anything malformed.
std::vector<Measurement> parse_measurements(std::string_view text, const std::string& file);
std::vector<Measurement> read_measurements(const std::filesystem::path& path);

// The rows the latency fit uses (gemm, attention, stream), in file order.
std::vector<MeasuredKernel> fit_kernels_of(const std::vector<Measurement>& measurements);

}  // namespace headroom::latency
