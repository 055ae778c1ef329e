#include "sim/policy/workspace_aware.hpp"

#include <algorithm>
#include <cmath>

namespace headroom::policy {

std::int64_t three_region_kv_tokens(std::int64_t budget, Bytes cell, int block, const engine::ClampedWorkspace& w) {
  if (budget <= 0 || cell == 0) return 0;
  const auto fits = [&](std::int64_t t) {
    return static_cast<double>(t) * static_cast<double>(cell) + static_cast<double>(w.bytes(t)) <=
           static_cast<double>(budget);
  };
  const auto per_token = static_cast<double>(cell);
  const auto per_request = static_cast<double>(w.per_request);
  const auto ctx = static_cast<double>(w.context_len);
  const auto b = static_cast<double>(budget);
  // Region 1: the pool at its minimum; region 3: at its maximum; region 2: requests = t/ctx × 512.
  const double low = (b - static_cast<double>(w.min_requests) * per_request) / per_token;
  const double high = (b - static_cast<double>(w.max_requests) * per_request) / per_token;
  const double growing = b / (per_token + 512.0 * per_request / ctx);
  double t = 0;
  if (w.requests(static_cast<std::int64_t>(high)) >= w.max_requests) t = high;
  else if (w.requests(static_cast<std::int64_t>(growing)) > w.min_requests) t = growing;
  else t = low;
  auto tokens = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(t))) / block * block;
  // The closed form ignores int() truncation of the pool size: settle on whole blocks exactly.
  while (tokens > 0 && !fits(tokens)) tokens -= block;
  while (fits(tokens + block)) tokens += block;
  return tokens;
}

}  // namespace headroom::policy
