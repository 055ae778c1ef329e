#include "sim/device/gpu_profile.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/device/builtin_profiles.hpp"
#include "sim/core/did_you_mean.hpp"
#include "sim/core/yaml_section.hpp"

namespace headroom::device {

namespace {

using Section = YamlSection;

LatencyCoefficients read_latency(const Section& s) {
  s.check_keys({"fitted", "gemm_peak_efficiency", "gemm_half_efficiency_tokens", "attention_efficiency",
                "memory_efficiency", "step_overhead_s", "graph_overhead_s"});
  LatencyCoefficients l;
  s.optional_bool("fitted", l.fitted);
  s.optional_number("gemm_peak_efficiency", l.gemm_peak_efficiency);
  s.optional_number("gemm_half_efficiency_tokens", l.gemm_half_efficiency_tokens, true);
  s.optional_number("attention_efficiency", l.attention_efficiency);
  s.optional_number("memory_efficiency", l.memory_efficiency);
  s.optional_number("step_overhead_s", l.step_overhead_s, true);
  s.optional_number("graph_overhead_s", l.graph_overhead_s, true);
  for (auto [key, value] : {std::pair{"gemm_peak_efficiency", l.gemm_peak_efficiency},
                            std::pair{"attention_efficiency", l.attention_efficiency},
                            std::pair{"memory_efficiency", l.memory_efficiency}})
    if (value > 1) s.fail(s.value(key), key, fmt::format("expected a fraction up to 1, got {}", value));
  return l;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

GpuProfile parse_gpu_profile(std::string_view yaml, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}:{}:{}: not valid YAML: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a mapping of keys at the top level", file));
  Section top(root, file, "");
  top.check_keys({"name", "vendor", "source", "source_note", "memory", "bandwidth_bytes_per_s",
                  "dense_bf16_flops_per_s", "dense_fp8_flops_per_s", "latency"});
  GpuProfile p;
  p.name = top.text("name");
  p.vendor = top.choice("vendor", {"nvidia", "amd"});
  p.source = top.choice("source", {"datasheet", "measured"});
  p.source_note = top.text("source_note");

  Section memory = top.child("memory");
  memory.check_keys({"capacity_bytes", "capacity_note", "context_bytes", "granularity_bytes"});
  p.capacity_bytes = memory.bytes("capacity_bytes");
  if (memory.present("capacity_note")) p.capacity_note = memory.text("capacity_note");
  p.context_bytes = memory.bytes("context_bytes");
  p.granularity_bytes = memory.bytes("granularity_bytes");
  if (p.context_bytes >= p.capacity_bytes)
    memory.fail(memory.value("context_bytes"), "context_bytes", "must be smaller than capacity_bytes");

  p.bandwidth_bytes_per_s = top.positive("bandwidth_bytes_per_s");
  p.dense_bf16_flops_per_s = top.positive("dense_bf16_flops_per_s");
  // Written as null where the GPU has no FP8 tensor cores; the key itself is required.
  if (!top.value("dense_fp8_flops_per_s").IsDefined())
    throw InputError(fmt::format("{}: missing key 'dense_fp8_flops_per_s' (null where the GPU has no FP8)", file));
  if (top.present("dense_fp8_flops_per_s")) p.dense_fp8_flops_per_s = top.positive("dense_fp8_flops_per_s");
  if (top.present("latency")) p.latency = read_latency(top.child("latency"));
  return p;
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
  if (fs::is_regular_file(path, ec)) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot open the GPU profile", path.string()));
    std::stringstream text;
    text << in.rdbuf();
    return parse_gpu_profile(text.str(), path.string());
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
  throw InputError(fmt::format("unknown GPU profile '{}'{} (built-in: {}; or give the path of a profile YAML file)",
                               name_or_path, did_you_mean_suffix(name_or_path, names), fmt::join(names, ", ")));
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
