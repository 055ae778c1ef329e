#pragma once
// "Did you mean ...?" for names a user typed: GPU profiles, catalogue models, YAML keys.
// Generic (no device facts); it sits in the device layer because the model layer, which
// also uses it, links this one. It may move to core.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// The candidate closest to `typed`, compared case-insensitively: a candidate that starts with
// `typed` wins; otherwise the smallest edit distance if it is at most max(2, |typed| / 3).
// Ties go to the earlier candidate, so the answer is deterministic. nullopt when nothing is close.
std::optional<std::string> did_you_mean(std::string_view typed, const std::vector<std::string>& candidates);

// "; did you mean 'x'?" or "" — ready to append to an error message.
std::string did_you_mean_suffix(std::string_view typed, const std::vector<std::string>& candidates);

// For hardware names, where one digit or letter is another product (h20 is not h200, mi325x is not
// mi355x, a800 is not h800, b200 is not gb200): as did_you_mean, but only a candidate of the same
// family (the letters before the first digit, punctuation ignored) whose runs of digits begin with
// the typed name's runs ("h100" may be "h100-sxm-80gb"; "h20" may not be "h200-141gb").
std::optional<std::string> did_you_mean_product(std::string_view typed, const std::vector<std::string>& candidates);
// The suffix names every candidate the typed name begins ("h100": one of 'h100-nvl', 'h100-pcie' or
// 'h100-sxm-80gb'), since each is other hardware.
std::string did_you_mean_product_suffix(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace headroom
