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

namespace headroom::device {

namespace {

// Reads one YAML mapping, remembering which keys were used so that leftovers are reported.
class Section {
 public:
  Section(const YAML::Node& node, const std::string& file, std::string path)
      : node_(node), file_(file), path_(std::move(path)) {}

  std::string where(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.line < 0) return file_;
    return fmt::format("{}:{}:{}", file_, m.line + 1, m.column + 1);
  }
  std::string key_path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  [[noreturn]] void fail(const YAML::Node& at, std::string_view key, std::string_view what) const {
    throw InputError(fmt::format("{}: key '{}': {}", where(at), key_path(key), what));
  }

  // Checks every key of the mapping is one of `allowed` (once each); call before reading.
  void check_keys(const std::vector<std::string>& allowed) const {
    std::set<std::string> seen;
    for (const auto& kv : node_) {
      std::string key = kv.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        throw InputError(fmt::format("{}: unknown key '{}'{}", where(kv.first), key_path(key),
                                     did_you_mean_suffix(key, allowed)));
      if (!seen.insert(key).second)
        throw InputError(fmt::format("{}: key '{}' appears twice", where(kv.first), key_path(key)));
    }
  }

  // The value of `key`: a null node when absent or written as `null` / `~`.
  YAML::Node value(std::string_view key) const {
    for (const auto& kv : node_)
      if (kv.first.Scalar() == key) return kv.second;
    return YAML::Node(YAML::NodeType::Undefined);
  }
  bool present(std::string_view key) const {
    YAML::Node v = value(key);
    return v.IsDefined() && !v.IsNull();
  }
  YAML::Node required(std::string_view key) const {
    YAML::Node v = value(key);
    if (!v.IsDefined() || v.IsNull()) {
      std::string place = path_.empty() ? file_ : where(node_);
      throw InputError(fmt::format("{}: missing key '{}'", place, key_path(key)));
    }
    return v;
  }

  std::string scalar(std::string_view key, const YAML::Node& v) const {
    if (!v.IsScalar()) fail(v, key, "expected a single value, got a " + std::string(v.IsMap() ? "mapping" : "list"));
    return v.Scalar();
  }
  std::string text(std::string_view key) const { return scalar(key, required(key)); }
  std::string choice(std::string_view key, const std::vector<std::string>& options) const {
    YAML::Node v = required(key);
    std::string s = scalar(key, v);
    if (std::find(options.begin(), options.end(), s) == options.end())
      fail(v, key, fmt::format("expected {}, got '{}'", fmt::join(options, " or "), s));
    return s;
  }
  // A byte count: an integer or a size such as "300 MiB" (units.hpp parse_bytes).
  Bytes bytes(std::string_view key) const {
    YAML::Node v = required(key);
    Bytes b = parse_bytes(scalar(key, v), fmt::format("{}: key '{}'", where(v), key_path(key)));
    if (b == 0) fail(v, key, "expected a positive byte count, got 0");
    return b;
  }
  double number(std::string_view key, const YAML::Node& v, bool allow_zero) const {
    std::string s = scalar(key, v);
    double d = 0;
    try {
      d = v.as<double>();
    } catch (const YAML::Exception&) {
      fail(v, key, fmt::format("expected a {} number, got '{}'", allow_zero ? "non-negative" : "positive", s));
    }
    if (!std::isfinite(d) || d < 0 || (d == 0 && !allow_zero))
      fail(v, key, fmt::format("expected a {} number, got '{}'", allow_zero ? "non-negative" : "positive", s));
    return d;
  }
  double positive(std::string_view key) const { return number(key, required(key), false); }
  void optional_number(std::string_view key, double& out, bool allow_zero = false) const {
    if (present(key)) out = number(key, value(key), allow_zero);
  }
  void optional_bool(std::string_view key, bool& out) const {
    if (!present(key)) return;
    YAML::Node v = value(key);
    std::string s = scalar(key, v);
    try {
      out = v.as<bool>();
    } catch (const YAML::Exception&) {
      fail(v, key, fmt::format("expected true or false, got '{}'", s));
    }
  }
  Section child(std::string_view key) const {
    YAML::Node v = required(key);
    if (!v.IsMap()) fail(v, key, "expected a mapping of keys");
    return Section(v, file_, key_path(key));
  }

 private:
  YAML::Node node_;
  const std::string& file_;
  std::string path_;
};

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
