#include "sim/latency/measurements.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/text_file.hpp"
#include "sim/workload/csv_split.hpp"

namespace headroom::latency {

namespace {

constexpr std::string_view kColumns[] = {"kind", "label", "flops", "bytes", "rows", "seconds"};

struct KindName {
  MeasurementKind kind;
  std::string_view name;
};
constexpr KindName kKinds[] = {{MeasurementKind::gemm, "gemm"},     {MeasurementKind::attention, "attention"},
                               {MeasurementKind::stream, "stream"}, {MeasurementKind::malloc, "malloc"},
                               {MeasurementKind::free, "free"},     {MeasurementKind::release_cached, "release_cached"}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

[[noreturn]] void fail(const std::string& file, int line, std::size_t column, std::string_view what) {
  throw InputError(fmt::format("{}:{}: column {} ({}): {}", file, line, column + 1, kColumns[column], what));
}

double number(std::string_view text, const std::string& file, int line, std::size_t column) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(value) || value < 0)
    fail(file, line, column, fmt::format("expected a non-negative number, got '{}'", text));
  return value;
}

}  // namespace

std::string_view measurement_kind_name(MeasurementKind kind) {
  for (const KindName& k : kKinds)
    if (k.kind == kind) return k.name;
  return "?";
}

std::vector<Measurement> parse_measurements(std::string_view text, const std::string& file) {
  std::vector<Measurement> out;
  std::vector<std::string_view> fields;
  int line_no = 0;
  bool header_seen = false;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    const std::string_view raw = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    ++line_no;
    const std::string_view line = trim(raw);
    if (line_no == 1) {
      if (line != kMeasurementsHeader)
        throw InputError(fmt::format("{}:1: expected the first line '{}' (a headroom measurement file), got '{}'", file,
                                     kMeasurementsHeader, line));
      continue;
    }
    if (line.empty() || line.front() == '#') continue;
    if (!header_seen) {
      if (line != kMeasurementsColumns)
        throw InputError(fmt::format("{}:{}: expected the column names '{}', got '{}'", file, line_no,
                                     kMeasurementsColumns, line));
      header_seen = true;
      continue;
    }
    if (!workload::split_csv(line, fields) || fields.size() != std::size(kColumns))
      throw InputError(fmt::format("{}:{}: expected {} comma-separated fields ({}), got {}", file, line_no,
                                   std::size(kColumns), kMeasurementsColumns, fields.size()));
    Measurement m;
    m.line = line_no;
    bool known = false;
    for (const KindName& k : kKinds)
      if (fields[0] == k.name) m.kind = k.kind, known = true;
    if (!known)
      fail(file, line_no, 0,
           fmt::format("expected gemm, attention, stream, malloc, free or release_cached, got '{}'", fields[0]));
    m.label = std::string(fields[1]);
    m.flops = number(fields[2], file, line_no, 2);
    m.bytes = number(fields[3], file, line_no, 3);
    m.rows = number(fields[4], file, line_no, 4);
    m.seconds = number(fields[5], file, line_no, 5);
    if (!(m.seconds > 0)) fail(file, line_no, 5, fmt::format("expected a positive time, got '{}'", fields[5]));
    const bool computes = m.kind == MeasurementKind::gemm || m.kind == MeasurementKind::attention;
    if (computes && !(m.flops > 0))
      fail(file, line_no, 2, fmt::format("{} rows need their FLOPs, got '{}'", fields[0], fields[2]));
    if (!(m.bytes > 0)) fail(file, line_no, 3, fmt::format("expected a positive byte count, got '{}'", fields[3]));
    if (m.kind == MeasurementKind::gemm && !(m.rows >= 1))
      fail(file, line_no, 4, fmt::format("gemm rows need their rows M (at least 1), got '{}'", fields[4]));
    out.push_back(std::move(m));
  }
  if (line_no == 0)
    throw InputError(fmt::format("{}: empty; expected the first line '{}'", file, kMeasurementsHeader));
  if (!header_seen) throw InputError(fmt::format("{}: no column names line '{}'", file, kMeasurementsColumns));
  return out;
}

std::vector<Measurement> read_measurements(const std::filesystem::path& path) {
  return parse_measurements(read_text_file(path, "measurement file"), path.string());
}

namespace {

// The KV tokens of each sequence of an attention row, from its label's "context=N" (how
// kernels/calibrate.cu labels its decode attention: "Llama-3.1-8B heads=32/8 d=128 batch=8
// context=2048"); 0 when the label does not say.
double label_context(std::string_view label) {
  constexpr std::string_view kKey = "context=";
  const std::size_t at = label.find(kKey);
  if (at == std::string_view::npos) return 0;
  double tokens = 0;
  for (std::size_t i = at + kKey.size(); i < label.size() && label[i] >= '0' && label[i] <= '9'; ++i)
    tokens = tokens * 10 + (label[i] - '0');
  return tokens;
}

}  // namespace

std::vector<MeasuredKernel> fit_kernels_of(const std::vector<Measurement>& measurements) {
  std::vector<MeasuredKernel> kernels;
  for (const Measurement& m : measurements) {
    KernelKind kind;
    switch (m.kind) {
      case MeasurementKind::gemm: kind = KernelKind::gemm; break;
      case MeasurementKind::attention: kind = KernelKind::attention; break;
      case MeasurementKind::stream: kind = KernelKind::stream; break;
      default: continue;
    }
    kernels.push_back({kind, m.flops, m.bytes, m.rows, m.seconds, kind == KernelKind::attention ? label_context(m.label) : 0});
  }
  return kernels;
}

}  // namespace headroom::latency
