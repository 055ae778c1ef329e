#pragma once
// The checks every engine's resolve() applies to its knobs, with messages that name the engine
// and the knob (EngineConfigError::key), shared by <engine>_config.cpp.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/engine/deployment.hpp"
#include "sim/engine/engine_limits.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/model/kv_layout.hpp"

namespace headroom::engine::knob_checks {

inline std::string lower(std::string_view text) {
  std::string s(text);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

inline void require_at_least(std::string_view engine, std::string_view field, std::int64_t value, std::int64_t least) {
  if (value < least)
    throw EngineConfigError(std::string(field), fmt::format("{} {}: expected at least {}, got {}", engine, field, least, value));
}

// The limits of engine_limits.hpp (docs/limits.md).
inline void require_at_most(std::string_view engine, std::string_view field, std::int64_t value, std::int64_t most) {
  if (value > most)
    throw EngineConfigError(std::string(field), fmt::format("{} {}: {} is above the limit of {} (docs/limits.md)", engine,
                                                            field, value, most));
}

inline void require_range(std::string_view engine, std::string_view field, std::int64_t value, std::int64_t least,
                          std::int64_t most) {
  require_at_least(engine, field, value, least);
  require_at_most(engine, field, value, most);
}

// The KV layout the engine would use: an InputError for a dtype the model cannot use names the knob.
inline model::KvLayout checked_kv_layout(const Deployment& d, model::Engine engine, model::KvCacheDtype dtype) {
  try {
    return model::kv_layout(d.model, engine_traits(engine).kv_pool, dtype, d.placement());
  } catch (const EngineConfigError&) {
    throw;
  } catch (const InputError& e) {
    throw EngineConfigError("kv_cache_dtype", e.what());
  }
}

inline void require_fraction(std::string_view engine, std::string_view field, double value) {
  if (!(value > 0.0 && value <= 1.0))
    throw EngineConfigError(std::string(field), fmt::format("{} {}: expected a value in (0, 1], got {}", engine, field, value));
}

inline void require_sizes(std::string_view engine, std::string_view field, const std::vector<int>& sizes) {
  if (sizes.empty())
    throw EngineConfigError(std::string(field), fmt::format("{} {}: expected at least one batch size", engine, field));
  for (int s : sizes)
    if (s < 1)
      throw EngineConfigError(std::string(field),
                              fmt::format("{} {}: expected batch sizes of at least 1, got {}", engine, field, s));
}

// Sorted ascending without repeats, as the engines keep their capture lists.
inline std::vector<int> sorted_unique(std::vector<int> sizes) {
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

inline std::string list(const std::vector<int>& sizes) {
  if (sizes.size() <= 8) return fmt::format("[{}]", fmt::join(sizes, ", "));
  return fmt::format("[{}, {}, {}, ..., {}] ({} sizes)", sizes[0], sizes[1], sizes[2], sizes.back(), sizes.size());
}

}  // namespace headroom::engine::knob_checks
