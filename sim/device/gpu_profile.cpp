#include "sim/device/gpu_profile.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/yaml_load.hpp"
#include "sim/device/builtin_profiles.hpp"
#include "sim/core/did_you_mean.hpp"
#include "sim/core/yaml_section.hpp"

namespace headroom::device {

namespace {

using Section = YamlSection;

LatencyCoefficients read_latency(const Section& s) {
  s.check_keys({"fitted", "gemm_peak_efficiency", "gemm_half_efficiency_tokens", "attention_efficiency",
                "memory_efficiency", "step_overhead_s", "graph_overhead_s", "kernel_floor_s", "attention_token_s"});
  LatencyCoefficients l;
  s.optional_bool("fitted", l.fitted);
  s.optional_number("gemm_peak_efficiency", l.gemm_peak_efficiency);
  s.optional_number("gemm_half_efficiency_tokens", l.gemm_half_efficiency_tokens, true);
  s.optional_number("attention_efficiency", l.attention_efficiency);
  s.optional_number("memory_efficiency", l.memory_efficiency);
  s.optional_number("step_overhead_s", l.step_overhead_s, true);
  s.optional_number("graph_overhead_s", l.graph_overhead_s, true);
  s.optional_number("kernel_floor_s", l.kernel_floor_s, true);
  s.optional_number("attention_token_s", l.attention_token_s, true);
  for (auto [key, value] : {std::pair{"gemm_peak_efficiency", l.gemm_peak_efficiency},
                            std::pair{"attention_efficiency", l.attention_efficiency},
                            std::pair{"memory_efficiency", l.memory_efficiency}})
    if (value > 1) s.fail(s.value(key), key, fmt::format("expected a fraction up to 1, got {}", value));
  return l;
}

Interconnect read_interconnect(const Section& s) {
  s.check_keys({"link", "generation", "bandwidth_bytes_per_s", "pcie_bandwidth_bytes_per_s", "note", "bus_efficiency",
                "nccl_latency_s", "hop_latency_s", "custom_all_reduce_latency_s"});
  Interconnect i;
  i.link = s.choice("link", {"nvlink", "nvlink_bridge", "infinity_fabric", "pcie"});
  i.generation = static_cast<int>(s.integer("generation", s.required("generation"), 1, 9));
  i.bandwidth_bytes_per_s = s.positive("bandwidth_bytes_per_s");
  if (i.link == "nvlink_bridge") {
    if (!s.present("pcie_bandwidth_bytes_per_s"))
      s.fail(s.node(), "pcie_bandwidth_bytes_per_s",
             "is required with link: nvlink_bridge (the PCIe path of groups wider than a bridged pair)");
    i.pcie_bandwidth_bytes_per_s = s.positive("pcie_bandwidth_bytes_per_s");
  } else if (s.present("pcie_bandwidth_bytes_per_s")) {
    s.fail(s.value("pcie_bandwidth_bytes_per_s"), "pcie_bandwidth_bytes_per_s",
           fmt::format("is only read with link: nvlink_bridge (link is {})", i.link));
  }
  i.note = s.text("note");
  s.optional_number("bus_efficiency", i.bus_efficiency);
  if (i.bus_efficiency > 1)
    s.fail(s.value("bus_efficiency"), "bus_efficiency", fmt::format("expected a fraction up to 1, got {}", i.bus_efficiency));
  s.optional_number("nccl_latency_s", i.nccl_latency_s, true);
  s.optional_number("hop_latency_s", i.hop_latency_s, true);
  s.optional_number("custom_all_reduce_latency_s", i.custom_all_reduce_latency_s, true);
  return i;
}

Calibration read_calibration(const Section& s) {
  s.check_keys({"command", "device", "runtime", "driver_version", "runtime_version", "date", "measurements"});
  Calibration c;
  c.command = s.text("command");
  c.device = s.text("device");
  c.runtime = s.choice("runtime", {"cuda", "hip"});
  c.driver_version = s.text("driver_version");
  c.runtime_version = s.text("runtime_version");
  c.date = s.text("date");
  if (s.present("measurements")) c.measurements = s.text("measurements");
  return c;
}

// A YAML scalar that reads back as the same string: plain text is quoted whenever a parser
// could take it for something else.
std::string yaml_quoted(std::string_view text) {
  YAML::Emitter e;
  e << YAML::DoubleQuoted << std::string(text);
  return e.c_str();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

GpuProfile parse_gpu_profile(std::string_view yaml, const std::string& file) {
  const YAML::Node root = load_yaml(yaml, file);
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a mapping of keys at the top level", file));
  Section top(root, file, "");
  top.check_keys({"name", "vendor", "source", "source_note", "memory", "bandwidth_bytes_per_s",
                  "dense_bf16_flops_per_s", "dense_fp8_flops_per_s", "dense_fp4_flops_per_s", "latency", "calibration",
                  "compute_capability", "interconnect"});
  GpuProfile p;
  p.name = top.text("name");
  p.vendor = top.choice("vendor", {"nvidia", "amd"});
  p.source = top.choice("source", {"datasheet", "measured"});
  p.source_note = top.text("source_note");
  if (top.present("compute_capability")) {
    const std::string cc = top.text("compute_capability");
    if (p.vendor != "nvidia")
      top.fail(top.value("compute_capability"), "compute_capability",
               fmt::format("is NVIDIA's compute capability; an {} GPU has none", p.vendor));
    if (!std::regex_match(cc, std::regex("[1-9][0-9]?\\.[0-9]")))
      top.fail(top.value("compute_capability"), "compute_capability",
               fmt::format("expected major.minor such as \"9.0\", got '{}'", cc));
    p.compute_capability = cc;
  }

  Section memory = top.child("memory");
  memory.check_keys({"capacity_bytes", "capacity_note", "context_bytes", "granularity_bytes", "free_at_start_bytes",
                     "largest_allocation_bytes"});
  p.capacity_bytes = memory.bytes("capacity_bytes");
  if (memory.present("capacity_note")) p.capacity_note = memory.text("capacity_note");
  p.context_bytes = memory.bytes("context_bytes");
  p.granularity_bytes = memory.bytes("granularity_bytes");
  if (memory.present("free_at_start_bytes")) p.free_at_start_bytes = memory.bytes("free_at_start_bytes");
  if (memory.present("largest_allocation_bytes")) p.largest_allocation_bytes = memory.bytes("largest_allocation_bytes");
  if (p.context_bytes >= p.capacity_bytes)
    memory.fail(memory.value("context_bytes"), "context_bytes", "must be smaller than capacity_bytes");

  p.bandwidth_bytes_per_s = top.positive("bandwidth_bytes_per_s");
  p.dense_bf16_flops_per_s = top.positive("dense_bf16_flops_per_s");
  // Written as null where the GPU has no FP8 tensor cores; the key itself is required.
  if (!top.value("dense_fp8_flops_per_s").IsDefined())
    throw InputError(fmt::format("{}: missing key 'dense_fp8_flops_per_s' (null where the GPU has no FP8)", file));
  if (top.present("dense_fp8_flops_per_s")) p.dense_fp8_flops_per_s = top.positive("dense_fp8_flops_per_s");
  // Optional: only GPUs with FP4 tensor cores (Blackwell) give it.
  if (top.present("dense_fp4_flops_per_s")) p.dense_fp4_flops_per_s = top.positive("dense_fp4_flops_per_s");
  if (top.present("latency")) p.latency = read_latency(top.child("latency"));
  if (top.present("interconnect")) p.interconnect = read_interconnect(top.child("interconnect"));
  if (top.present("calibration")) p.calibration = read_calibration(top.child("calibration"));
  return p;
}

std::string gpu_profile_yaml(const GpuProfile& p) {
  // Numbers as fmt's shortest round-trip form, so the file parses back to the same doubles.
  std::string y;
  auto line = [&](std::string_view indent, std::string_view key, const std::string& value) {
    y += fmt::format("{}{}: {}\n", indent, key, value);
  };
  line("", "name", yaml_quoted(p.name));
  line("", "vendor", p.vendor);
  if (!p.compute_capability.empty()) line("", "compute_capability", yaml_quoted(p.compute_capability));
  line("", "source", p.source);
  line("", "source_note", yaml_quoted(p.source_note));
  y += "memory:\n";
  line("  ", "capacity_bytes", fmt::format("{}", p.capacity_bytes));
  if (!p.capacity_note.empty()) line("  ", "capacity_note", yaml_quoted(p.capacity_note));
  line("  ", "context_bytes", fmt::format("{}", p.context_bytes));
  line("  ", "granularity_bytes", fmt::format("{}", p.granularity_bytes));
  if (p.free_at_start_bytes) line("  ", "free_at_start_bytes", fmt::format("{}", *p.free_at_start_bytes));
  if (p.largest_allocation_bytes) line("  ", "largest_allocation_bytes", fmt::format("{}", *p.largest_allocation_bytes));
  line("", "bandwidth_bytes_per_s", fmt::format("{}", p.bandwidth_bytes_per_s));
  line("", "dense_bf16_flops_per_s", fmt::format("{}", p.dense_bf16_flops_per_s));
  line("", "dense_fp8_flops_per_s", p.dense_fp8_flops_per_s ? fmt::format("{}", *p.dense_fp8_flops_per_s) : "null");
  if (p.dense_fp4_flops_per_s) line("", "dense_fp4_flops_per_s", fmt::format("{}", *p.dense_fp4_flops_per_s));
  const LatencyCoefficients& l = p.latency;
  y += "latency:\n";
  line("  ", "fitted", l.fitted ? "true" : "false");
  line("  ", "gemm_peak_efficiency", fmt::format("{}", l.gemm_peak_efficiency));
  line("  ", "gemm_half_efficiency_tokens", fmt::format("{}", l.gemm_half_efficiency_tokens));
  line("  ", "attention_efficiency", fmt::format("{}", l.attention_efficiency));
  line("  ", "memory_efficiency", fmt::format("{}", l.memory_efficiency));
  line("  ", "step_overhead_s", fmt::format("{}", l.step_overhead_s));
  line("  ", "graph_overhead_s", fmt::format("{}", l.graph_overhead_s));
  // Written only when set, so that a profile without them writes as before.
  if (l.kernel_floor_s != 0) line("  ", "kernel_floor_s", fmt::format("{}", l.kernel_floor_s));
  if (l.attention_token_s != 0) line("  ", "attention_token_s", fmt::format("{}", l.attention_token_s));
  if (p.interconnect) {
    const Interconnect& i = *p.interconnect;
    const Interconnect defaults;
    y += "interconnect:\n";
    line("  ", "link", i.link);
    line("  ", "generation", fmt::format("{}", i.generation));
    line("  ", "bandwidth_bytes_per_s", fmt::format("{}", i.bandwidth_bytes_per_s));
    if (i.pcie_bandwidth_bytes_per_s)
      line("  ", "pcie_bandwidth_bytes_per_s", fmt::format("{}", *i.pcie_bandwidth_bytes_per_s));
    line("  ", "note", yaml_quoted(i.note));
    // The coefficients only where they differ from the defaults, as the built-in profiles leave them.
    if (i.bus_efficiency != defaults.bus_efficiency) line("  ", "bus_efficiency", fmt::format("{}", i.bus_efficiency));
    if (i.nccl_latency_s != defaults.nccl_latency_s) line("  ", "nccl_latency_s", fmt::format("{}", i.nccl_latency_s));
    if (i.hop_latency_s != defaults.hop_latency_s) line("  ", "hop_latency_s", fmt::format("{}", i.hop_latency_s));
    if (i.custom_all_reduce_latency_s != defaults.custom_all_reduce_latency_s)
      line("  ", "custom_all_reduce_latency_s", fmt::format("{}", i.custom_all_reduce_latency_s));
  }
  if (p.calibration) {
    const Calibration& c = *p.calibration;
    y += "calibration:\n";
    line("  ", "command", yaml_quoted(c.command));
    line("  ", "device", yaml_quoted(c.device));
    line("  ", "runtime", c.runtime);
    line("  ", "driver_version", yaml_quoted(c.driver_version));
    line("  ", "runtime_version", yaml_quoted(c.runtime_version));
    line("  ", "date", yaml_quoted(c.date));
    if (!c.measurements.empty()) line("  ", "measurements", yaml_quoted(c.measurements));
  }
  return y;
}

std::vector<std::string> builtin_gpu_profile_names() {
  std::vector<std::string> names;
  for (const auto& b : builtin_profile_texts()) names.emplace_back(b.name);
  return names;
}

GpuProfile load_gpu_profile(std::string_view name_or_path) {
  namespace fs = std::filesystem;
  fs::path path(name_or_path);
  std::error_code ec;
  refuse_special_file(path, "GPU profile");
  if (fs::is_regular_file(path, ec)) {
    return parse_gpu_profile(read_text_file(path, "GPU profile"), path.string());
  }
  std::string wanted = lower(name_or_path);
  if (wanted.ends_with(".yaml")) wanted.resize(wanted.size() - 5);
  for (const auto& b : builtin_profile_texts())
    if (lower(b.name) == wanted)
      return parse_gpu_profile(b.yaml, fmt::format("sim/device/profiles/{}.yaml", b.name));
  bool looks_like_path = name_or_path.find('/') != std::string_view::npos || name_or_path.ends_with(".yaml") ||
                         name_or_path.ends_with(".yml");
  if (looks_like_path) throw InputError(fmt::format("{}: cannot open the GPU profile", name_or_path));
  auto names = builtin_gpu_profile_names();
  // A suggestion only for a typo of the same product of the same family (did_you_mean_product): a
  // neighbouring name is other hardware, with other memory. Among a product's profiles the datasheet
  // ones are offered first (`h100` → its boards); a measured one is asked for by its name.
  std::vector<std::string> suggestable = names;
  std::stable_partition(suggestable.begin(), suggestable.end(),
                        [](const std::string& n) { return !n.ends_with("-measured"); });
  throw InputError(fmt::format(
      "unknown GPU profile '{}'{} (built-in: {}; or give the path of a profile YAML file with the keys name, vendor, "
      "source, source_note (where each figure comes from: required), memory.capacity_bytes, memory.context_bytes, "
      "memory.granularity_bytes, bandwidth_bytes_per_s, dense_bf16_flops_per_s and dense_fp8_flops_per_s (null "
      "without FP8), optionally memory.capacity_note, dense_fp4_flops_per_s, compute_capability and interconnect: "
      "docs/models-and-gpus.md, \"GPU profiles\")",
      name_or_path, did_you_mean_product_suffix(name_or_path, suggestable), fmt::join(names, ", ")));
}

bool Interconnect::fully_connected(int ranks) const {
  // vLLM platforms/cuda.py is_fully_connected: every pair joined by NVLink (NVML); on ROCm every
  // pair of an xGMI mesh. A bridge joins only its own pair.
  if (link == "nvlink" || link == "infinity_fabric") return true;
  return link == "nvlink_bridge" && ranks <= 2;
}

double Interconnect::bus_bytes_per_s(int ranks) const {
  const double both = link == "nvlink_bridge" && ranks > 2 ? *pcie_bandwidth_bytes_per_s : bandwidth_bytes_per_s;
  return both / 2 * bus_efficiency;
}

int GpuProfile::compute_capability_major() const {
  return compute_capability.empty() ? 0 : std::stoi(compute_capability.substr(0, compute_capability.find('.')));
}

DeviceSpec device_spec(const GpuProfile& profile) {
  DeviceSpec spec;
  spec.name = profile.name;
  spec.total = profile.capacity_bytes;
  spec.context_bytes = profile.context_bytes;
  spec.granularity = profile.granularity_bytes;
  return spec;
}

}  // namespace headroom::device
