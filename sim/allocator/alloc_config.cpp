#include "sim/allocator/alloc_config.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <vector>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::alloc {

std::size_t AllocatorConfig::divisions_for(Bytes n) const {
  // log_size > 20 ? log_size - 20 : 0, clamped to 15 (c10/core/AllocatorConfig.cpp).
  std::size_t log_size = static_cast<std::size_t>(std::bit_width(n)) - 1;
  std::size_t index = log_size > 20 ? log_size - 20 : 0;
  return roundup_power2_divisions[std::min(index, kRoundUpPowerOfTwoIntervals - 1)];
}

namespace {

// PyTorch's ConfigTokenizer: ',', ':', '[' and ']' are tokens of their own; spaces are dropped.
class Tokens {
 public:
  Tokens(std::string_view text, std::string_view source, std::string_view whole)
      : source_(source), whole_(whole) {
    std::string buf;
    for (char ch : text) {
      if (ch == ',' || ch == ':' || ch == '[' || ch == ']') {
        if (!buf.empty()) tokens_.push_back(std::move(buf)), buf.clear();
        tokens_.emplace_back(1, ch);
      } else if (ch != ' ') {
        buf += ch;
      }
    }
    if (!buf.empty()) tokens_.push_back(std::move(buf));
  }
  std::size_t size() const { return tokens_.size(); }
  const std::string& operator[](std::size_t i) const {
    static const std::string empty;
    return i < tokens_.size() ? tokens_[i] : empty;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("{}: '{}': {}", source_, whole_, what));
  }
  void check(std::size_t i, std::string_view token) const {
    if (i >= size() || tokens_[i] != token)
      fail(fmt::format("expected '{}' but got '{}'", token, (*this)[i]));
  }
  std::size_t to_size(std::size_t i) const {
    if (i >= size()) fail("expected a number at the end of the string");
    const std::string& t = tokens_[i];
    std::size_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size()) fail(fmt::format("expected a non-negative integer but got '{}'", t));
    return v;
  }
  double to_double(std::size_t i) const {
    if (i >= size()) fail("expected a number at the end of the string");
    const std::string& t = tokens_[i];
    double v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size()) fail(fmt::format("expected a number but got '{}'", t));
    return v;
  }
  bool to_bool(std::size_t i) const {
    const std::string& t = (*this)[i];
    if (t == "True" || t == "true") return true;
    if (t == "False" || t == "false") return false;
    fail(fmt::format("expected 'True' or 'False' but got '{}'", t));
  }

 private:
  std::vector<std::string> tokens_;
  std::string_view source_, whole_;
};

bool is_pow2(std::size_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::size_t parse_divisions(const Tokens& t, std::size_t i, AllocatorConfig& c) {
  t.check(++i, ":");
  auto& div = c.roundup_power2_divisions;
  if (t[++i] == "[") {
    bool first = true;
    std::size_t last_index = 0;
    while (++i < t.size() && t[i] != "]") {
      std::size_t key_index = i;
      t.check(++i, ":");
      std::size_t value = t.to_size(++i);
      if (!(value == 0 || is_pow2(value)))
        t.fail("for roundups, the divisions has to be power of 2 or 0 to disable roundup");
      if (t[key_index] == ">") {
        // Newest: '>' fills every index after the last key (AllocatorConfig.cpp).
        std::fill(div.begin() + static_cast<std::ptrdiff_t>(std::min(last_index + 1, div.size())), div.end(), value);
      } else {
        std::size_t boundary = t.to_size(key_index);
        if (!is_pow2(boundary)) t.fail("for roundups, the intervals have to be power of 2");
        std::size_t index = static_cast<std::size_t>(std::bit_width(boundary)) - 1;
        index = std::min(index, div.size() - 1);
        if (first) {
          std::fill(div.begin(), div.begin() + static_cast<std::ptrdiff_t>(index), value);
          first = false;
        }
        div[index] = value;
        last_index = index;
      }
      if (t[i + 1] != "]") t.check(++i, ",");
    }
    if (i >= t.size()) t.fail("expected closing bracket ']' but reached the end of the string");
  } else {
    std::size_t value = t.to_size(i);
    if (!is_pow2(value)) t.fail("for roundups, the divisions has to be power of 2");
    div.fill(value);
  }
  return i;
}

}  // namespace

AllocatorConfig parse_alloc_conf(std::string_view text, std::string_view source) {
  AllocatorConfig c;
  c.text = std::string(text);
  Tokens t(text, source, text);
  bool rounding_given = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string key = t[i];
    if (key == "max_split_size_mb") {
      t.check(++i, ":");
      std::size_t mb = t.to_size(++i);
      // Newest check is ">= 20" (c10/core/AllocatorConfig.cpp); older releases required "> 20".
      if (mb < kLargeBuffer / MiB)
        t.fail(fmt::format("CachingAllocator option max_split_size_mb too small, must be >= {}", kLargeBuffer / MiB));
      c.max_split_size = mb >= kUnlimited / MiB ? kUnlimited : mb * MiB;
    } else if (key == "max_non_split_rounding_mb") {
      t.check(++i, ":");
      std::size_t mb = t.to_size(++i);
      if (mb < kLargeBuffer / MiB)
        t.fail(fmt::format("CachingAllocator option max_non_split_rounding_mb too small, must be >= {}",
                           kLargeBuffer / MiB));
      c.max_non_split_rounding_size = mb * MiB;
      rounding_given = true;
    } else if (key == "large_segment_size_mb") {
      t.check(++i, ":");
      std::size_t mb = t.to_size(++i);
      if (mb <= kMinLargeAlloc / MiB) t.fail("large_segment_size_mb must be > 10");
      c.large_segment_size = mb * MiB;
    } else if (key == "garbage_collection_threshold") {
      t.check(++i, ":");
      double v = t.to_double(++i);
      if (!(v > 0.0 && v < 1.0)) t.fail("garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
      c.garbage_collection_threshold = v;
    } else if (key == "roundup_power2_divisions") {
      i = parse_divisions(t, i, c);
    } else if (key == "expandable_segments") {
      t.check(++i, ":");
      c.expandable_segments = t.to_bool(++i);
    } else if (key == "per_process_memory_fraction") {
      t.check(++i, ":");
      double v = t.to_double(++i);
      if (!(v >= 0.0 && v <= 1.0)) t.fail("per_process_memory_fraction is invalid, set it in [0.0, 1.0]");
      c.per_process_memory_fraction = v;
    } else if (key == "backend") {
      t.check(++i, ":");
      const std::string& b = t[++i];
      if (b == "cudaMallocAsync" || b == "hipMallocAsync")
        t.fail("backend '" + b + "' is not modelled: headroom models the native caching allocator only");
      if (b != "native") t.fail("unknown allocator backend '" + b + "' (expected native or cudaMallocAsync)");
    } else if (key == "release_lock_on_cudamalloc" || key == "release_lock_on_hipmalloc") {
      t.check(++i, ":");
      c.release_lock_on_cudamalloc = t.to_bool(++i);
    } else if (key == "graph_capture_record_stream_reuse") {
      t.check(++i, ":");
      c.graph_capture_record_stream_reuse = t.to_bool(++i);
    } else if (key == "pinned_use_cuda_host_register" || key == "pinned_use_hip_host_register" ||
               key == "pinned_use_background_threads") {
      t.check(++i, ":");
      (void)t.to_bool(++i);  // host-memory options: no effect on device memory
    } else if (key == "pinned_num_register_threads") {
      t.check(++i, ":");
      std::size_t v = t.to_size(++i);
      if (!is_pow2(v)) t.fail("number of register threads has to be power of 2");
      // CUDAAllocatorConfig::pinned_max_register_threads() = 128.
      if (v > 128) t.fail("number of register threads should be less than or equal to 128");
    } else {
      t.fail("unrecognized CachingAllocator option '" + key +
             "' (known: max_split_size_mb, max_non_split_rounding_mb, garbage_collection_threshold, "
             "roundup_power2_divisions, expandable_segments, large_segment_size_mb, "
             "per_process_memory_fraction, backend, release_lock_on_cudamalloc, "
             "graph_capture_record_stream_reuse, pinned_*)");
    }
    if (i + 1 < t.size()) t.check(++i, ",");
  }
  // The rounding slack follows large_segment_size unless given (newest CUDAAllocatorConfig).
  if (!rounding_given) c.max_non_split_rounding_size = c.large_segment_size;
  return c;
}

std::string to_string(const AllocatorConfig& c) {
  std::vector<std::string> parts;
  if (c.max_split_limited()) parts.push_back(fmt::format("max_split_size_mb:{}", c.max_split_size / MiB));
  if (c.max_non_split_rounding_size != c.large_segment_size)
    parts.push_back(fmt::format("max_non_split_rounding_mb:{}", c.max_non_split_rounding_size / MiB));
  if (c.large_segment_size != kLargeBuffer)
    parts.push_back(fmt::format("large_segment_size_mb:{}", c.large_segment_size / MiB));
  if (c.garbage_collection_threshold > 0)
    parts.push_back(fmt::format("garbage_collection_threshold:{}", c.garbage_collection_threshold));
  if (std::any_of(c.roundup_power2_divisions.begin(), c.roundup_power2_divisions.end(), [](auto d) { return d; })) {
    std::string list = "roundup_power2_divisions:[";
    for (std::size_t i = 0; i < c.roundup_power2_divisions.size(); ++i) {
      if (i) list += ",";
      list += fmt::format("{}:{}", Bytes{1} << i, c.roundup_power2_divisions[i]);
    }
    parts.push_back(list + "]");
  }
  if (c.expandable_segments) parts.push_back("expandable_segments:True");
  if (c.per_process_memory_fraction)
    parts.push_back(fmt::format("per_process_memory_fraction:{}", *c.per_process_memory_fraction));
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "," : "") + parts[i];
  return out;
}

}  // namespace headroom::alloc
