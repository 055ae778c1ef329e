#pragma once
// The KV-capacity arithmetic the policies share, as pure functions of what the engine measured
// (engine::KvSizingInputs) so that tests pin the numbers.
#include <cstdint>
#include <string>
#include <variant>

#include "sim/core/units.hpp"
#include "sim/engine/startup.hpp"

namespace headroom::policy {

// static_fraction: the engine's static arithmetic at `fraction`, in whole blocks, as its
// description gives it (EngineTraits static_fraction_tokens): vLLM without profiling: total ×
// fraction − weights (§1.1 minus its profile terms); SGLang: (free_after − free_before × (1 −
// fraction)) / cell (§2.2); LightLLM: (free_after − total × (1 − fraction)) / cell (§3). Never negative.
std::int64_t static_fraction_tokens(model::Engine engine, const engine::KvSizingInputs& in, double fraction);

// profiled (vLLM §1.1): requested − weights − activation peak − non-torch growth − graph
// estimate − margin − buffer, where requested = total × fraction. May be negative.
struct ProfiledBudget {
  Bytes requested = 0;
  Bytes weights = 0;
  Bytes activation_peak = 0;      // torch_peak_increase of the profile forward
  Bytes non_torch_increase = 0;
  Bytes graph_estimate = 0;
  Bytes margin = 0;
  Bytes buffer = 0;               // fragmentation_buffer's max(floor, k × fragmentation)
  std::int64_t kv_bytes() const;
};

// Runs the profile forward at the engine's largest prefill over its largest batch and fills
// requested (total × fraction), weights, activation peak and non-torch growth, plus the
// fragmentation the run left (peak reserved − peak allocated). The error message on OOM.
struct ProfiledMeasurement {
  ProfiledBudget budget;
  Bytes fragmentation = 0;
};
std::variant<ProfiledMeasurement, std::string> measure_profiled(engine::KvSizingInputs& in, double fraction);

// Tokens of `kv_bytes` in whole blocks; 0 when the budget is not positive.
std::int64_t tokens_of(std::int64_t kv_bytes, const engine::KvSizingInputs& in);

// fragmentation_buffer: max(floor, k × fragmentation), fragmentation = peak reserved − peak
// allocated during the profile run.
Bytes fragmentation_buffer_bytes(Bytes fragmentation, double k, Bytes floor);

}  // namespace headroom::policy
