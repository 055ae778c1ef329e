#pragma once
// Start-up sizing policies and runtime guards (docs/design.md "policy"): each a small object with
// one decision, usable with every engine. A policy starts the engine its own way (the KV capacity
// it decides, a canary it holds, a buffer placement, an allocator configuration) and says what it
// measured; the serving loop then runs unchanged.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/startup_result.hpp"

namespace headroom::policy {

enum class PolicyKind {
  engine,                // the engine's own start-up, as configured
  static_fraction,       // SGLang mem_fraction_static / LightLLM mem_fraction / vLLM utilisation without profiling
  profiled,              // vLLM's profile-run accounting (§1.1), optional graph estimate and margin
  fragmentation_buffer,  // profiled minus max(floor, k × fragmentation seen while profiling)
  auto_profile,          // LightLLM PR #1273: probe, measure, rebuild, canary, validate, shrink 5% and retry
  workspace_aware,       // KV and a workspace that grows with it solved together (SGLang #18263, #36563)
  workspace_cap,         // workspace partitions capped by the KV capacity (SGLang #20888, #20890)
  shared_decode_buffer,  // one shared MLA decode buffer instead of one per layer (vLLM #37799)
  release_on_oom,        // a canary held after start-up, released at the first OOM and the step retried
  allocator,             // a PYTORCH_CUDA_ALLOC_CONF what-if (expandable_segments, max_split_size_mb, ...)
};
std::string_view policy_kind_name(PolicyKind kind);
std::optional<PolicyKind> parse_policy_kind(std::string_view text);
const std::vector<std::string_view>& policy_kind_names();

// A policy as plain data (a scenario's `compare:` entry); parameters a kind does not use are
// ignored, and every default is the documented one. auto_profile's numbers are LightLLM PR #1273's
// (docs/serving-memory-model.md §3); the fragmentation buffer's k = 2 and 150 MiB floor are the proposal
// the project's policy issue names (150 MiB is vLLM's logged redundancy, §1.1).
struct PolicySpec {
  PolicyKind kind = PolicyKind::engine;
  std::string label;                    // shown in tables; default: describe()
  std::optional<double> fraction;       // share of the device; default: the engine's own knob
  Bytes margin = 0;                     // profiled: a fixed margin such as vLLM's 150 MiB suggestion
  bool cudagraph_estimate = false;      // profiled: subtract vLLM PR #30515's graph estimate
  double k = 2.0;                       // fragmentation_buffer: multiple of the measured fragmentation
  Bytes floor = 150 * MiB;              // fragmentation_buffer: the least buffer
  double mem_fraction = 0.95;           // auto_profile: budget multiplier (PR #1273 commit 23310168d)
  Bytes canary = 256 * MiB;             // auto_profile, release_on_oom (PR #1273's canary)
  double shrink = 0.05;                 // auto_profile: the KV capacity lost per retry (PR #1273)
  int max_retries = 3;                  // auto_profile: retries after the first attempt (PR #1273)
  std::int64_t min_probe_tokens = 8192; // auto_profile: probe KV = max(this, prefill + graph batch) (PR #1273)
  std::string alloc_conf;               // allocator: the configuration string
};

// "fragmentation_buffer(k=2, floor=150.00 MiB)".
std::string describe(const PolicySpec& spec);

// What starting the engine under a policy gave.
struct PolicyStart {
  engine::StartupResult startup;
  int attempts = 1;                     // start-ups made (auto_profile retries)
  std::vector<std::int64_t> attempted_kv_tokens;  // auto_profile: the capacity of each attempt
  std::optional<Bytes> kv_budget;       // the bytes the policy sized the KV cache against
  // The device bytes the policy plans the whole process into (a budget line for the memory
  // chart), and its rule: "profiled: fraction 0.9 × capacity". Absent: the engine's own knob.
  std::optional<Bytes> device_budget;
  std::string device_budget_rule;
  bool release_canary_on_oom = false;   // serving frees the canary at the first OOM
  std::vector<std::string> notes;       // the policy's own figures, one line each
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual const PolicySpec& spec() const = 0;
  // Starts the engine of `config` on `deployment` under this policy.
  virtual PolicyStart start(const engine::Deployment& deployment, const engine::EngineConfig& config) const = 0;
};

// The policy object of a spec. Throws InputError for parameters out of range.
std::unique_ptr<Policy> make_policy(const PolicySpec& spec);

// The engine's own fraction knob, read as a share of the device: vLLM gpu_memory_utilization,
// SGLang mem_fraction_static (resolved), LightLLM mem_fraction.
double engine_fraction(const engine::EngineConfig& config);

}  // namespace headroom::policy
