#include "sim/core/yaml_section.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/did_you_mean.hpp"
#include "sim/core/error.hpp"
#include "sim/core/utf8.hpp"

namespace headroom {

YamlSection::YamlSection(const YAML::Node& node, const std::string& file, std::string path)
    : node_(node), file_(file), path_(std::move(path)) {}

std::string YamlSection::where(const YAML::Node& n) const {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return file_;
  return fmt::format("{}:{}:{}", file_, m.line + 1, m.column + 1);
}

std::string YamlSection::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void YamlSection::fail(const YAML::Node& at, std::string_view key, std::string_view what) const {
  throw InputError(fmt::format("{}: key '{}': {}", where(at), key_path(key), what));
}

void YamlSection::check_keys(const std::vector<std::string>& allowed) const {
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

YAML::Node YamlSection::value(std::string_view key) const {
  for (const auto& kv : node_)
    if (kv.first.Scalar() == key) return kv.second;
  return YAML::Node(YAML::NodeType::Undefined);
}

bool YamlSection::present(std::string_view key) const {
  YAML::Node v = value(key);
  return v.IsDefined() && !v.IsNull();
}

YAML::Node YamlSection::required(std::string_view key) const {
  YAML::Node v = value(key);
  if (!v.IsDefined() || v.IsNull()) {
    std::string place = path_.empty() ? file_ : where(node_);
    throw InputError(fmt::format("{}: missing key '{}'", place, key_path(key)));
  }
  return v;
}

std::string YamlSection::scalar(std::string_view key, const YAML::Node& v) const {
  if (!v.IsScalar()) fail(v, key, "expected a single value, got a " + std::string(v.IsMap() ? "mapping" : "list"));
  if (!is_valid_utf8(v.Scalar())) fail(v, key, "expected UTF-8 text (YAML files are UTF-8), got other bytes");
  return v.Scalar();
}

std::string YamlSection::text(std::string_view key) const { return scalar(key, required(key)); }

std::string YamlSection::choice(std::string_view key, const std::vector<std::string>& options) const {
  YAML::Node v = required(key);
  std::string s = scalar(key, v);
  if (std::find(options.begin(), options.end(), s) == options.end())
    fail(v, key, fmt::format("expected {}, got '{}'{}", fmt::join(options, " or "), s, did_you_mean_suffix(s, options)));
  return s;
}

Bytes YamlSection::bytes(std::string_view key, bool allow_zero) const {
  YAML::Node v = required(key);
  Bytes b = parse_bytes(scalar(key, v), fmt::format("{}: key '{}'", where(v), key_path(key)));
  if (b == 0 && !allow_zero) fail(v, key, "expected a positive byte count, got 0");
  return b;
}

double YamlSection::number(std::string_view key, const YAML::Node& v, bool allow_zero) const {
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

double YamlSection::positive(std::string_view key) const { return number(key, required(key), false); }

void YamlSection::optional_number(std::string_view key, double& out, bool allow_zero) const {
  if (present(key)) out = number(key, value(key), allow_zero);
}

void YamlSection::optional_bool(std::string_view key, bool& out) const {
  if (!present(key)) return;
  YAML::Node v = value(key);
  std::string s = scalar(key, v);
  try {
    out = v.as<bool>();
  } catch (const YAML::Exception&) {
    fail(v, key, fmt::format("expected true or false, got '{}'", s));
  }
}

std::int64_t YamlSection::integer(std::string_view key, const YAML::Node& v, std::int64_t lo, std::int64_t hi) const {
  std::string s = scalar(key, v);
  std::int64_t x = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec != std::errc() || p != s.data() + s.size() || x < lo || x > hi)
    fail(v, key, fmt::format("expected a whole number from {} to {}, got '{}'", lo, hi, s));
  return x;
}

YamlSection YamlSection::child(std::string_view key) const {
  YAML::Node v = required(key);
  if (!v.IsMap()) fail(v, key, "expected a mapping of keys");
  return YamlSection(v, file_, key_path(key));
}

}  // namespace headroom
