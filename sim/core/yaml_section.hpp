#pragma once
// Reading one YAML mapping of a user's file with errors that name the place: every key must be one
// of the allowed ones (unknown keys get a did-you-mean), values are typed, and every message starts
// with "<file>:<line>:<col>: key '<path>'". Shared by GPU profiles and scenarios.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/units.hpp"

namespace headroom {

class YamlSection {
 public:
  // `file` must outlive the section (errors name it).
  YamlSection(const YAML::Node& node, const std::string& file, std::string path);

  std::string where(const YAML::Node& n) const;
  std::string key_path(std::string_view key) const;
  [[noreturn]] void fail(const YAML::Node& at, std::string_view key, std::string_view what) const;

  // Checks every key of the mapping is one of `allowed` (once each); call before reading.
  void check_keys(const std::vector<std::string>& allowed) const;

  // The value of `key`: a null node when absent or written as `null` / `~`.
  YAML::Node value(std::string_view key) const;
  bool present(std::string_view key) const;
  YAML::Node required(std::string_view key) const;

  std::string scalar(std::string_view key, const YAML::Node& v) const;
  std::string text(std::string_view key) const;
  std::string choice(std::string_view key, const std::vector<std::string>& options) const;
  // A byte count: an integer or a size such as "300 MiB" (units.hpp parse_bytes); positive unless
  // `allow_zero`.
  Bytes bytes(std::string_view key, bool allow_zero = false) const;
  double number(std::string_view key, const YAML::Node& v, bool allow_zero) const;
  double positive(std::string_view key) const;
  void optional_number(std::string_view key, double& out, bool allow_zero = false) const;
  void optional_bool(std::string_view key, bool& out) const;
  // A whole number within [lo, hi].
  std::int64_t integer(std::string_view key, const YAML::Node& v, std::int64_t lo, std::int64_t hi) const;
  YamlSection child(std::string_view key) const;
  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }

 private:
  YAML::Node node_;
  const std::string& file_;
  std::string path_;
};

}  // namespace headroom
