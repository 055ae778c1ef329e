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
  // Measured kernels show two more terms (docs/calibration.md "Why the kernel model has a floor and
  // a serial attention term"); 0, their default, leaves the roofline above unchanged.
  Seconds kernel_floor_s = 0;                // per kernel launched eagerly: its shortest time
  Seconds attention_token_s = 0;             // per KV token one decode sequence's attention scans
  bool operator==(const LatencyCoefficients&) const = default;
};

// How a measured profile was measured (kernels/headroom-calibrate writes it; docs/calibration.md "Calibrating
// on your own GPU"). Absent from datasheet profiles.
struct Calibration {
  std::string command;          // the calibrator's command line
  std::string device;           // the device name the runtime reports
  std::string runtime;          // "cuda" | "hip"
  std::string driver_version;   // as the runtime reports it (cudaDriverGetVersion: 12080 = 12.8)
  std::string runtime_version;
  std::string date;             // ISO 8601, UTC
  std::string measurements;     // the measurement CSV (sim/latency/measurements.hpp), relative to the profile
  bool operator==(const Calibration&) const = default;
};

// How the GPUs of one node reach each other, for the step latency of tensor and pipeline parallelism
// (sim/latency/collective.hpp). The link and its bandwidth are the datasheet's; the efficiency and
// latencies are model coefficients with documented defaults, like `latency` (docs/models-and-gpus.md
// "Interconnect").
struct Interconnect {
  // nvlink: NVLink through NVSwitch (HGX/DGX boards, GB200 NVL): every pair of GPUs joined;
  // nvlink_bridge: NVLink bridges joining pairs of PCIe cards (H100 NVL); infinity_fabric: AMD's
  // mesh of xGMI links joining every pair; pcie: no GPU-to-GPU link, traffic over PCIe.
  std::string link;
  int generation = 0;                 // NVLink 3/4/5, Infinity Fabric 3/4, PCIe 4/5
  double bandwidth_bytes_per_s = 0;   // per GPU, both directions together, as datasheets quote it
  // nvlink_bridge only: the card's PCIe bandwidth (both directions), which groups wider than the
  // bridged pair cross.
  std::optional<double> pcie_bandwidth_bytes_per_s;
  std::string note;                   // where the figures come from
  // The fraction of one direction's bandwidth NCCL's ring reaches as bus bandwidth: ~370 of 450 GB/s
  // on H100 NVLink 4 (NVIDIA/nccl-tests#212, the NCCL maintainer: "~20 %" protocol overhead;
  // NVIDIA/nccl#1455: 365-370 GB/s busBw with NCCL_ALGO=RING on 2 to 8 H100 SXM).
  double bus_efficiency = 0.82;
  // NCCL's cost of a collective: a base latency per call plus one per ring step (the form of NCCL
  // src/graph/tuning.cc: baseLat + nsteps × hwLat). Fitted to vLLM PR #24111's H100 pynccl
  // all-reduce times at TP 4 and 6 (0.5 MB: 17 and 23 µs).
  Seconds nccl_latency_s = 6e-6;
  Seconds hop_latency_s = 1.5e-6;
  // vLLM's custom all-reduce, per stage (a launch and a barrier): vLLM PR #24111's H100 ca_1stage
  // at TP 4 and 6 (0.5 MB: 10 and 13 µs) less their bytes over the bus.
  Seconds custom_all_reduce_latency_s = 6e-6;
  bool operator==(const Interconnect&) const = default;

  // Whether every pair of `ranks` GPUs is joined directly (vLLM's is_fully_connected).
  bool fully_connected(int ranks) const;
  // One direction's bandwidth a group of `ranks` GPUs reaches per GPU (bytes/s): the link's (or,
  // beyond an NVLink-bridged pair, PCIe's) half of both directions, times bus_efficiency.
  double bus_bytes_per_s(int ranks) const;
};

struct GpuProfile {
  std::string name;
  std::string vendor;       // nvidia | amd
  // NVIDIA's compute capability "major.minor" (developer.nvidia.com/cuda-gpus): engines pick kernels
  // by it (vLLM fa_utils.py: FlashAttention 3 on 9.x). Empty: not given (AMD, or a user profile).
  std::string compute_capability;
  std::string source;       // datasheet | measured
  std::string source_note;  // where the figures come from
  Bytes capacity_bytes = 0;     // totalGlobalMem as the driver reports it
  std::string capacity_note;    // where that figure comes from (optional)
  Bytes context_bytes = 0;      // CUDA/HIP context and libraries, outside PyTorch's allocator
  Bytes granularity_bytes = 0;  // driver allocation granularity
  std::optional<Bytes> free_at_start_bytes;       // measured: free memory before the context was created
  std::optional<Bytes> largest_allocation_bytes;  // measured: the largest single allocation that succeeded
  double bandwidth_bytes_per_s = 0;
  double dense_bf16_flops_per_s = 0;
  std::optional<double> dense_fp8_flops_per_s;  // none: no FP8 tensor cores (A100)
  std::optional<double> dense_fp4_flops_per_s;  // none: no FP4 tensor cores (before Blackwell)
  LatencyCoefficients latency;
  // Absent in a user profile that does not give it: steps then have no communication term.
  std::optional<Interconnect> interconnect;
  std::optional<Calibration> calibration;
  bool operator==(const GpuProfile&) const = default;
  // The major version of compute_capability; 0 when it is not given.
  int compute_capability_major() const;
};

// Parses profile YAML. `file` names the source in errors ("<file>:<line>:<col>: ...").
// Unknown keys and bad values are InputErrors naming the key, with a did-you-mean for keys.
GpuProfile parse_gpu_profile(std::string_view yaml, const std::string& file);

// A built-in profile by name (case-insensitive, ".yaml" optional), or a profile YAML file by path.
// Unknown names are InputErrors with a did-you-mean and the list of built-in profiles.
GpuProfile load_gpu_profile(std::string_view name_or_path);

// The profile as YAML in the schema parse_gpu_profile reads (comments are not kept); it parses
// back to an equal profile. `headroom fit` writes fitted coefficients back with it.
std::string gpu_profile_yaml(const GpuProfile& profile);

// Names of the built-in profiles, sorted.
std::vector<std::string> builtin_gpu_profile_names();

// The device the caching allocator sees for this profile (nothing held by other processes).
DeviceSpec device_spec(const GpuProfile& profile);

}  // namespace headroom::device
