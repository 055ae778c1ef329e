#pragma once
// A GPU profile: capacity, what the CUDA/HIP context takes, driver granularity, HBM bandwidth,
// dense throughput, and the step-latency coefficients a later calibration fits. Profiles are
// YAML files (sim/device/profiles/<name>.yaml); the built-in ones are compiled into the binary,
// and measured profiles written by the calibration program use the same schema.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/device/device.hpp"

namespace headroom::device {

// Coefficients of the step-latency model. The built-in values are defaults, not measurements
// (`fitted: false`); the calibration issue replaces them with fitted ones.
struct LatencyCoefficients {
  bool fitted = false;
  double gemm_peak_efficiency = 0.75;        // fraction of dense peak FLOP/s a large GEMM reaches
  double gemm_half_efficiency_tokens = 128;  // tokens (GEMM M) at which a GEMM reaches half of that
  double attention_efficiency = 0.5;         // fraction of peak attention kernels reach
  double memory_efficiency = 0.8;            // fraction of HBM bandwidth that streaming reads reach
  Seconds step_overhead_s = 0.002;           // per engine step in eager mode (launches, scheduling)
  Seconds graph_overhead_s = 0.0002;         // per engine step replayed from a CUDA graph
  bool operator==(const LatencyCoefficients&) const = default;
};

struct GpuProfile {
  std::string name;
  std::string vendor;       // nvidia | amd
  std::string source;       // datasheet | measured
  std::string source_note;  // where the figures come from
  Bytes capacity_bytes = 0;     // totalGlobalMem as the driver reports it
  std::string capacity_note;    // where that figure comes from (optional)
  Bytes context_bytes = 0;      // CUDA/HIP context and libraries, outside PyTorch's allocator
  Bytes granularity_bytes = 0;  // driver allocation granularity
  double bandwidth_bytes_per_s = 0;
  double dense_bf16_flops_per_s = 0;
  std::optional<double> dense_fp8_flops_per_s;  // none: no FP8 tensor cores (A100)
  LatencyCoefficients latency;
  bool operator==(const GpuProfile&) const = default;
};

// Parses profile YAML. `file` names the source in errors ("<file>:<line>:<col>: ...").
// Unknown keys and bad values are InputErrors naming the key, with a did-you-mean for keys.
GpuProfile parse_gpu_profile(std::string_view yaml, const std::string& file);

// A built-in profile by name (case-insensitive, ".yaml" optional), or a profile YAML file by path.
// Unknown names are InputErrors with a did-you-mean and the list of built-in profiles.
GpuProfile load_gpu_profile(std::string_view name_or_path);

// Names of the built-in profiles, sorted.
std::vector<std::string> builtin_gpu_profile_names();

// The device the caching allocator sees for this profile (nothing held by other processes).
DeviceSpec device_spec(const GpuProfile& profile);

}  // namespace headroom::device
