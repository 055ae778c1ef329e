// Built-in GPU profiles (sim/device/profiles/*.yaml, compiled in) and the profile YAML reader.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sim/core/error.hpp"
#include "sim/device/gpu_profile.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::device;
namespace fs = std::filesystem;

namespace {

struct Expected {
  const char* name;
  const char* vendor;
  Bytes capacity;      // as cited in the profile's capacity_note
  double bandwidth;    // datasheet bytes/s
  double bf16;         // datasheet dense FLOP/s
  double fp8;          // datasheet dense FLOP/s, 0 = none
  double fp4 = 0;      // datasheet dense FLOP/s, 0 = none
};

// Capacities: totalGlobalMem where a driver report was found (B200 and RTX 3090 to PyTorch's
// 0.01 GiB), nvidia-smi's MiB where only that was (H20, H100 PCIe/NVL, L4, A10G), the sister
// product's report (A800 = A100 80GB, H800 = H100 SXM), the datasheet's nominal size (GB200
// 186 GB, MI325X 256 GiB); each capacity_note says which.
const Expected kBuiltins[] = {
    {"a100-40gb", "nvidia", 42'505'273'344, 1.555e12, 312e12, 0},
    {"a100-80gb", "nvidia", 85'100'068'864, 2.039e12, 312e12, 0},
    {"a10g", "nvidia", 23'028 * MiB, 600e9, 125e12, 0},
    {"a800-80gb", "nvidia", 85'100'068'864, 2.039e12, 312e12, 0},
    {"b200", "nvidia", 191'501'854'310, 8e12, 2250e12, 4500e12, 9000e12},
    {"gb200", "nvidia", 186'000'000'000, 8e12, 2500e12, 5000e12, 10000e12},
    {"h100-nvl", "nvidia", 95'830 * MiB, 3.9e12, 835.5e12, 1670.5e12},
    {"h100-pcie", "nvidia", 81'559 * MiB, 2.0e12, 756.5e12, 1513e12},
    {"h100-sxm-80gb", "nvidia", 85'028'896'768, 3.35e12, 989.5e12, 1979e12},
    {"h20", "nvidia", 97'871 * MiB, 4.0e12, 148e12, 296e12},
    {"h200-141gb", "nvidia", 143'156 * MiB, 4.8e12, 989.5e12, 1979e12},
    {"h800", "nvidia", 85'028'896'768, 3.35e12, 989.5e12, 1979e12},
    {"l4", "nvidia", 23'034 * MiB, 300e9, 121e12, 242.5e12},
    {"l40s", "nvidia", 47'576'711'168, 864e9, 362.05e12, 733e12},
    {"mi300x", "amd", 205'822'885'888, 5.3e12, 1307.4e12, 2614.9e12},
    {"mi325x", "amd", 256 * GiB, 6e12, 1307.4e12, 2614.9e12},
    {"mi355x", "amd", 309'220'868'096, 8e12, 2516.6e12, 5033.2e12},
    {"rtx-3090", "nvidia", 25'436'943'811, 936e9, 71e12, 0},
    {"rtx-4090", "nvidia", 25'756'696'576, 1.008e12, 165.2e12, 330.3e12},
};

std::string error_of(std::string_view yaml) {
  try {
    parse_gpu_profile(yaml, "gpu.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// A valid profile; tests below break one line of it.
const std::string kValid = R"(name: test-gpu
vendor: nvidia
source: measured
source_note: written by a test
memory:
  capacity_bytes: 80 GiB
  context_bytes: 300 MiB
  granularity_bytes: 2MiB
bandwidth_bytes_per_s: 3.0e12
dense_bf16_flops_per_s: 1.0e15
dense_fp8_flops_per_s: 2.0e15
latency:
  fitted: true
  gemm_peak_efficiency: 0.81
  step_overhead_s: 0.0015
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("the built-in profiles carry the datasheet figures and cited capacities") {
  std::vector<std::string> names;
  for (const auto& e : kBuiltins) names.emplace_back(e.name);
  // Beside them, the measured H100 (source: measured; tests/latency/test_measured_h100.cpp checks it
  // against its calibration in ../shared/gpu).
  names.insert(std::find(names.begin(), names.end(), "h100-nvl"), "h100-80gb-hbm3-measured");
  CHECK(builtin_gpu_profile_names() == names);
  CHECK(load_gpu_profile("h100-80gb-hbm3-measured").source == "measured");
  for (const auto& e : kBuiltins) {
    INFO(e.name);
    GpuProfile p = load_gpu_profile(e.name);
    CHECK(p.name == e.name);
    CHECK(p.vendor == e.vendor);
    CHECK(p.source == "datasheet");
    CHECK_FALSE(p.source_note.empty());
    CHECK_FALSE(p.capacity_note.empty());
    CHECK(p.capacity_bytes == e.capacity);
    CHECK(p.context_bytes == 300 * MiB);  // docs/serving-memory-model.md §5 typical
    CHECK(p.granularity_bytes == 2 * MiB);
    CHECK(p.bandwidth_bytes_per_s == e.bandwidth);
    CHECK(p.dense_bf16_flops_per_s == e.bf16);
    if (e.fp8 == 0)
      CHECK_FALSE(p.dense_fp8_flops_per_s.has_value());
    else
      CHECK(p.dense_fp8_flops_per_s == e.fp8);
    if (e.fp4 == 0)
      CHECK_FALSE(p.dense_fp4_flops_per_s.has_value());
    else
      CHECK(p.dense_fp4_flops_per_s == e.fp4);
    // Latency coefficients are the documented defaults until the calibration fits them.
    CHECK(p.latency == LatencyCoefficients{});
    CHECK_FALSE(p.latency.fitted);
  }
}

TEST_CASE("profiles load by name ignoring case and .yaml, or from a file") {
  CHECK(load_gpu_profile("H100-SXM-80GB").name == "h100-sxm-80gb");
  CHECK(load_gpu_profile("mi300x.yaml").name == "mi300x");

  fs::path file = headroom::test::temp_dir("gpu") / "my-gpu.yaml";
  std::ofstream(file) << kValid;
  GpuProfile p = load_gpu_profile(file.string());
  CHECK(p.name == "test-gpu");
  CHECK(p.source == "measured");
  CHECK(p.capacity_bytes == 80 * GiB);
  CHECK(p.context_bytes == 300 * MiB);
  CHECK(p.capacity_note.empty());
  CHECK(p.latency.fitted);
  CHECK(p.latency.gemm_peak_efficiency == 0.81);
  CHECK(p.latency.step_overhead_s == 0.0015);
  CHECK(p.latency.memory_efficiency == LatencyCoefficients{}.memory_efficiency);  // absent: default

  DeviceSpec spec = device_spec(load_gpu_profile("h100-sxm-80gb"));
  CHECK(spec.name == "h100-sxm-80gb");
  CHECK(spec.total == 85'028'896'768);
  CHECK(spec.context_bytes == 300 * MiB);
  CHECK(spec.granularity == 2 * MiB);
  CHECK(spec.other_processes == 0);
}

TEST_CASE("unknown profile names get a did-you-mean for typos only, and the list of built-ins") {
  CHECK_THROWS_WITH(load_gpu_profile("h100"),
                    "unknown GPU profile 'h100'; did you mean one of 'h100-nvl', 'h100-pcie', 'h100-sxm-80gb' or 'h100-80gb-hbm3-measured'? (built-in: a100-40gb, a100-80gb, a10g, "
                    "a800-80gb, b200, gb200, h100-80gb-hbm3-measured, h100-nvl, h100-pcie, h100-sxm-80gb, h20, h200-141gb, h800, l4, l40s, "
                    "mi300x, mi325x, mi355x, rtx-3090, rtx-4090; or give the path of a profile YAML file with the keys "
                    "name, vendor, source, source_note (where each figure comes from: required), "
                    "memory.capacity_bytes, memory.context_bytes, memory.granularity_bytes, bandwidth_bytes_per_s, "
                    "dense_bf16_flops_per_s and dense_fp8_flops_per_s (null without FP8), optionally "
                    "memory.capacity_note, dense_fp4_flops_per_s, compute_capability and interconnect: docs/models-and-gpus.md, \"GPU profiles\")");
  CHECK_THROWS_WITH(load_gpu_profile("H100-SXM-80G"), Catch::StartsWith("unknown GPU profile 'H100-SXM-80G'; did you mean "
                                                                        "'h100-sxm-80gb'?"));
  CHECK_THROWS_WITH(load_gpu_profile("rtx4090"), Catch::StartsWith("unknown GPU profile 'rtx4090'; did you mean 'rtx-4090'?"));
  CHECK_THROWS_WITH(load_gpu_profile("h100pcie"), Catch::StartsWith("unknown GPU profile 'h100pcie'; did you mean 'h100-pcie'?"));
  CHECK_THROWS_WITH(load_gpu_profile("a800"), Catch::StartsWith("unknown GPU profile 'a800'; did you mean 'a800-80gb'?"));
  CHECK_THROWS_WITH(load_gpu_profile("mi325"), Catch::StartsWith("unknown GPU profile 'mi325'; did you mean 'mi325x'?"));
  // The products issue 17 found sent to other hardware are built in now, under their own names.
  CHECK(load_gpu_profile("mi325x").name == "mi325x");
  CHECK(load_gpu_profile("H20").name == "h20");
  // Another model number or another family is other hardware, however close the spelling (issue 17):
  // mi350x is not mi355x, a40 not a100-40gb, b300 not b200, gb300 not gb200, gh200 not gb200, a200
  // not b200, h800-pcie not h800, h210 not h20 or h200-141gb, l20 not l4 or l40s.
  for (const char* other : {"mi350x", "a40", "b300", "gb300", "gh200", "a200", "h800-pcie", "h210", "l20"}) {
    INFO(other);
    CHECK_THROWS_WITH(load_gpu_profile(other),
                      Catch::StartsWith(std::string("unknown GPU profile '") + other + "' (built-in: "));
  }
  CHECK_THROWS_WITH(load_gpu_profile("tpu"), Catch::StartsWith("unknown GPU profile 'tpu' (built-in: "));
  CHECK_THROWS_WITH(load_gpu_profile("/no/such/gpu.yaml"), "/no/such/gpu.yaml: cannot open the GPU profile");
}

TEST_CASE("bad profile YAML is an error naming file, line, column and key") {
  CHECK(error_of(kValid) == "no error");
  CHECK(error_of(replace(kValid, "bandwidth_bytes_per_s", "bandwith_bytes_per_s")) ==
        "gpu.yaml:9:1: unknown key 'bandwith_bytes_per_s'; did you mean 'bandwidth_bytes_per_s'?");
  CHECK(error_of(replace(kValid, "  context_bytes", "  contxt_bytes")) ==
        "gpu.yaml:7:3: unknown key 'memory.contxt_bytes'; did you mean 'context_bytes'?");
  CHECK(error_of(replace(kValid, "3.0e12", "fast")) ==
        "gpu.yaml:9:24: key 'bandwidth_bytes_per_s': expected a positive number, got 'fast'");
  CHECK(error_of(replace(kValid, "1.0e15", "-1")) ==
        "gpu.yaml:10:25: key 'dense_bf16_flops_per_s': expected a positive number, got '-1'");
  CHECK(error_of(replace(kValid, "80 GiB", "lots")) ==
        "gpu.yaml:6:19: key 'memory.capacity_bytes': 'lots' is not a byte size (no number); expected e.g. 4096, "
        "512MiB, 24GiB, 80GB");
  CHECK(error_of(replace(kValid, "vendor: nvidia", "vendor: intel")) ==
        "gpu.yaml:2:9: key 'vendor': expected nvidia or amd, got 'intel'");
  CHECK(error_of(replace(kValid, "source: measured", "source: guessed")) ==
        "gpu.yaml:3:9: key 'source': expected datasheet or measured, got 'guessed'");
  CHECK(error_of(replace(kValid, "name: test-gpu\n", "")) == "gpu.yaml: missing key 'name'");
  CHECK(error_of(replace(kValid, "  granularity_bytes: 2MiB\n", "")) ==
        "gpu.yaml:6:3: missing key 'memory.granularity_bytes'");
  CHECK(error_of(replace(kValid, "dense_fp8_flops_per_s: 2.0e15\n", "")) ==
        "gpu.yaml: missing key 'dense_fp8_flops_per_s' (null where the GPU has no FP8)");
  CHECK(error_of(replace(kValid, "0.81", "1.3")) ==
        "gpu.yaml:14:25: key 'latency.gemm_peak_efficiency': expected a fraction up to 1, got 1.3");
  CHECK(error_of(replace(kValid, "fitted: true", "fitted: maybe")) ==
        "gpu.yaml:13:11: key 'latency.fitted': expected true or false, got 'maybe'");
  CHECK(error_of(replace(kValid, "  step_overhead_s", "  step_overhead")) ==
        "gpu.yaml:15:3: unknown key 'latency.step_overhead'; did you mean 'step_overhead_s'?");
  CHECK(error_of(replace(kValid, "memory:\n", "memory: 80GB\nold_memory:\n")) ==
        "gpu.yaml:6:1: unknown key 'old_memory'");
  CHECK(error_of(kValid + "name: again\n") == "gpu.yaml:16:1: key 'name' appears twice");
  std::string memory_block = "memory:\n  capacity_bytes: 80 GiB\n  context_bytes: 300 MiB\n  granularity_bytes: 2MiB\n";
  CHECK(error_of(replace(kValid, memory_block, "memory: [1, 2]\n")) ==
        "gpu.yaml:5:9: key 'memory': expected a mapping of keys");
  CHECK(error_of(replace(kValid, "300 MiB", "81 GiB")) ==
        "gpu.yaml:7:18: key 'memory.context_bytes': must be smaller than capacity_bytes");
  CHECK(error_of("name: [unclosed\n") == "gpu.yaml:2:1: not valid YAML: end of sequence flow not found");
  CHECK(error_of("- a\n- b\n") == "gpu.yaml: expected a mapping of keys at the top level");
}

TEST_CASE("a profile written by gpu_profile_yaml parses back to an equal profile") {
  for (const std::string& name : builtin_gpu_profile_names()) {
    INFO(name);
    const GpuProfile p = load_gpu_profile(name);
    CHECK(parse_gpu_profile(gpu_profile_yaml(p), "written.yaml") == p);
  }
  // A measured profile: the measured memory facts and the calibration section survive, and text
  // that YAML would read as something else (a colon, quotes, a number) stays text.
  GpuProfile m = parse_gpu_profile(kValid, "gpu.yaml");
  m.source_note = "note: with \"quotes\" and # a hash";
  m.free_at_start_bytes = 84'492'025'856;
  m.largest_allocation_bytes = 84'410'236'928;
  m.dense_fp8_flops_per_s.reset();
  m.latency.gemm_half_efficiency_tokens = 96.123456789012345;
  m.calibration = Calibration{"headroom-calibrate -o a: b.yaml", "NVIDIA H100 80GB HBM3", "cuda", "12080", "13000",
                              "2025-06-01T12:00:00Z", "a.measurements.csv"};
  const std::string text = gpu_profile_yaml(m);
  CHECK_THAT(text, Catch::Contains("dense_fp8_flops_per_s: null"));
  CHECK_THAT(text, Catch::Contains("  driver_version: \"12080\""));
  CHECK(parse_gpu_profile(text, "written.yaml") == m);
}

TEST_CASE("the calibration section and measured memory facts are checked like every key") {
  const std::string measured = kValid + R"(calibration:
  command: headroom-calibrate
  device: GPU
  runtime: cuda
  driver_version: "12080"
  runtime_version: "13000"
  date: "2025-06-01T12:00:00Z"
)";
  CHECK(error_of(measured) == "no error");
  CHECK(error_of(replace(measured, "runtime: cuda", "runtime: opencl")) ==
        "gpu.yaml:19:12: key 'calibration.runtime': expected cuda or hip, got 'opencl'");
  CHECK(error_of(replace(measured, "  date:", "  dat:")) ==
        "gpu.yaml:22:3: unknown key 'calibration.dat'; did you mean 'date'?");
  CHECK(error_of(replace(measured, "  device: GPU\n", "")) == "gpu.yaml:17:3: missing key 'calibration.device'");
  CHECK(error_of(replace(kValid, "  granularity_bytes: 2MiB\n", "  granularity_bytes: 2MiB\n  largest_allocation_bytes: big\n")) ==
        "gpu.yaml:9:29: key 'memory.largest_allocation_bytes': 'big' is not a byte size (no number); expected e.g. "
        "4096, 512MiB, 24GiB, 80GB");
}

TEST_CASE("compute_capability: NVIDIA's major.minor, given by every built-in NVIDIA profile") {
  // developer.nvidia.com/cuda-gpus: Ampere 8.0 / 8.6, Ada 8.9, Hopper 9.0, Blackwell (B200) 10.0.
  CHECK(load_gpu_profile("a100-80gb").compute_capability == "8.0");
  CHECK(load_gpu_profile("a10g").compute_capability == "8.6");
  CHECK(load_gpu_profile("l40s").compute_capability == "8.9");
  CHECK(load_gpu_profile("h20").compute_capability_major() == 9);
  CHECK(load_gpu_profile("h100-80gb-hbm3-measured").compute_capability_major() == 9);
  CHECK(load_gpu_profile("b200").compute_capability_major() == 10);
  for (const std::string& name : builtin_gpu_profile_names()) {
    INFO(name);
    const GpuProfile p = load_gpu_profile(name);
    CHECK(p.compute_capability.empty() == (p.vendor == "amd"));
  }
  // Optional: a profile without it gives 0; written back and read again it stays.
  CHECK(parse_gpu_profile(kValid, "gpu.yaml").compute_capability_major() == 0);
  const GpuProfile given =
      parse_gpu_profile(replace(kValid, "vendor: nvidia\n", "vendor: nvidia\ncompute_capability: \"12.0\"\n"), "gpu.yaml");
  CHECK(given.compute_capability_major() == 12);
  CHECK(parse_gpu_profile(gpu_profile_yaml(given), "again.yaml") == given);
  CHECK_THROWS_WITH(parse_gpu_profile(replace(kValid, "vendor: nvidia\n", "vendor: nvidia\ncompute_capability: 9\n"),
                                      "gpu.yaml"),
                    "gpu.yaml:3:21: key 'compute_capability': expected major.minor such as \"9.0\", got '9'");
}

TEST_CASE("interconnect: each built-in profile's GPU-to-GPU link from its datasheet, optional and checked in a user's") {
  // The datasheets' per-GPU figures, both directions together (each profile's interconnect.note).
  struct Link {
    const char* profile;
    const char* link;
    int generation;
    double bandwidth;
  };
  const Link links[] = {
      {"a100-40gb", "nvlink", 3, 600e9},        {"a100-80gb", "nvlink", 3, 600e9},
      {"a10g", "pcie", 4, 64e9},                {"a800-80gb", "nvlink", 3, 400e9},
      {"b200", "nvlink", 5, 1.8e12},            {"gb200", "nvlink", 5, 1.8e12},
      {"h100-80gb-hbm3-measured", "nvlink", 4, 900e9},
      {"h100-nvl", "nvlink_bridge", 4, 600e9},  {"h100-pcie", "pcie", 5, 128e9},
      {"h100-sxm-80gb", "nvlink", 4, 900e9},    {"h20", "nvlink", 4, 900e9},
      {"h200-141gb", "nvlink", 4, 900e9},       {"h800", "nvlink", 4, 400e9},
      {"l4", "pcie", 4, 64e9},                  {"l40s", "pcie", 4, 64e9},
      {"mi300x", "infinity_fabric", 4, 896e9},  {"mi325x", "infinity_fabric", 4, 896e9},
      {"mi355x", "infinity_fabric", 4, 1075.2e9}, {"rtx-3090", "pcie", 4, 64e9},
      {"rtx-4090", "pcie", 4, 64e9},
  };
  CHECK(std::size(links) == builtin_gpu_profile_names().size());
  for (const Link& l : links) {
    INFO(l.profile);
    const GpuProfile p = load_gpu_profile(l.profile);
    REQUIRE(p.interconnect.has_value());
    CHECK(p.interconnect->link == l.link);
    CHECK(p.interconnect->generation == l.generation);
    CHECK(p.interconnect->bandwidth_bytes_per_s == l.bandwidth);
    CHECK_FALSE(p.interconnect->note.empty());
    // The coefficients are the documented defaults in every built-in profile.
    const Interconnect defaults;
    CHECK(p.interconnect->bus_efficiency == defaults.bus_efficiency);
    CHECK(p.interconnect->hop_latency_s == defaults.hop_latency_s);
  }
  // Bus bandwidth: one direction × 0.82; an NVLink-bridged pair, and PCIe beyond it.
  CHECK(load_gpu_profile("h100-sxm-80gb").interconnect->bus_bytes_per_s(8) == Approx(369e9));
  const Interconnect nvl = *load_gpu_profile("h100-nvl").interconnect;
  CHECK(nvl.fully_connected(2));
  CHECK_FALSE(nvl.fully_connected(4));
  CHECK(nvl.bus_bytes_per_s(2) == Approx(300e9 * 0.82));
  CHECK(nvl.bus_bytes_per_s(4) == Approx(64e9 * 0.82));
  CHECK_FALSE(load_gpu_profile("l40s").interconnect->fully_connected(2));
  CHECK(load_gpu_profile("mi300x").interconnect->fully_connected(8));

  // Optional in a user profile; given, it is read, written and read back alike.
  CHECK_FALSE(parse_gpu_profile(kValid, "gpu.yaml").interconnect.has_value());
  const std::string with = kValid + "interconnect:\n  link: nvlink\n  generation: 4\n  bandwidth_bytes_per_s: 900e9\n"
                                    "  note: datasheet\n  bus_efficiency: 0.9\n  hop_latency_s: 2e-6\n";
  const GpuProfile given = parse_gpu_profile(with, "gpu.yaml");
  CHECK(given.interconnect->bus_efficiency == 0.9);
  CHECK(given.interconnect->hop_latency_s == 2e-6);
  CHECK(parse_gpu_profile(gpu_profile_yaml(given), "again.yaml") == given);
  CHECK(error_of(replace(with, "link: nvlink", "link: nvswitch")) ==
        "gpu.yaml:17:9: key 'interconnect.link': expected nvlink or nvlink_bridge or infinity_fabric or pcie, got 'nvswitch'");
  CHECK(error_of(replace(with, "generation: 4", "generation: four")) ==
        "gpu.yaml:18:15: key 'interconnect.generation': expected a whole number from 1 to 9, got 'four'");
  CHECK(error_of(replace(with, "900e9", "0")) ==
        "gpu.yaml:19:26: key 'interconnect.bandwidth_bytes_per_s': expected a positive number, got '0'");
  CHECK(error_of(replace(with, "bus_efficiency: 0.9", "bus_efficiency: 1.2")) ==
        "gpu.yaml:21:19: key 'interconnect.bus_efficiency': expected a fraction up to 1, got 1.2");
  CHECK(error_of(replace(with, "  note: datasheet\n", "")) == "gpu.yaml:17:3: missing key 'interconnect.note'");
  CHECK(error_of(replace(with, "link: nvlink", "link: nvlink_bridge")) ==
        "gpu.yaml:17:3: key 'interconnect.pcie_bandwidth_bytes_per_s': is required with link: nvlink_bridge (the PCIe "
        "path of groups wider than a bridged pair)");
  CHECK(error_of(replace(with, "  note:", "  pcie_bandwidth_bytes_per_s: 128e9\n  note:")) ==
        "gpu.yaml:20:31: key 'interconnect.pcie_bandwidth_bytes_per_s': is only read with link: nvlink_bridge (link "
        "is nvlink)");
  CHECK(error_of(replace(with, "  hop_latency_s", "  hop_latency")) ==
        "gpu.yaml:22:3: unknown key 'interconnect.hop_latency'; did you mean 'hop_latency_s'?");
}
