#include "sim/core/did_you_mean.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>

namespace headroom {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Levenshtein distance with one rolling row.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The runs of digits of a name: "h100-sxm-80gb" -> {100, 80}, as text ("080" stays "080").
std::vector<std::string> digit_runs(std::string_view s) {
  std::vector<std::string> runs;
  for (std::size_t i = 0; i < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    runs.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return runs;
}

// The letters before a name's first digit, lower case, punctuation dropped: its product family
// ("h100-sxm-80gb" -> "h", "RTX-4090" -> "rtx", "mi300x" -> "mi", "gb200" -> "gb").
std::string family(std::string_view s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (std::isdigit(u)) break;
    if (std::isalpha(u)) out += static_cast<char>(std::tolower(u));
  }
  return out;
}

}  // namespace

std::optional<std::string> did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
  std::string t = lower(typed);
  if (t.empty()) return std::nullopt;
  for (const auto& c : candidates)
    if (lower(c).starts_with(t)) return c;
  size_t limit = std::max<size_t>(2, t.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(t, lower(c));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean_suffix(std::string_view typed, const std::vector<std::string>& candidates) {
  auto guess = did_you_mean(typed, candidates);
  return guess ? "; did you mean '" + *guess + "'?" : std::string();
}

namespace {

// The candidates of the same product as `typed` (did_you_mean_product).
std::vector<std::string> same_product(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::vector<std::string> typed_runs = digit_runs(typed);
  const std::string typed_family = family(typed);
  std::vector<std::string> out;
  for (const auto& c : candidates) {
    const std::vector<std::string> runs = digit_runs(c);
    if (family(c) == typed_family && runs.size() >= typed_runs.size() &&
        std::equal(typed_runs.begin(), typed_runs.end(), runs.begin()))
      out.push_back(c);
  }
  return out;
}

}  // namespace

std::optional<std::string> did_you_mean_product(std::string_view typed, const std::vector<std::string>& candidates) {
  return did_you_mean(typed, same_product(typed, candidates));
}

std::string did_you_mean_product_suffix(std::string_view typed, const std::vector<std::string>& candidates) {
  // "h100" begins three boards (NVL, PCIe, SXM), each with its own memory: name them all, not the first.
  const std::vector<std::string> product = same_product(typed, candidates);
  const std::string t = lower(typed);
  std::vector<std::string> begun;
  for (const auto& c : product)
    if (!t.empty() && lower(c).starts_with(t)) begun.push_back(c);
  if (begun.size() > 1) {
    std::string list;
    for (std::size_t i = 0; i < begun.size(); ++i)
      list += (i == 0 ? "" : i + 1 == begun.size() ? " or " : ", ") + ("'" + begun[i] + "'");
    return "; did you mean one of " + list + "?";
  }
  auto guess = did_you_mean(typed, product);
  return guess ? "; did you mean '" + *guess + "'?" : std::string();
}

}  // namespace headroom
