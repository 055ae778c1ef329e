#pragma once
// One engine as the other layers see it: its names, the spelling of its memory-fraction knob, its
// KV dtype, its static KV arithmetic at a fraction, its start-up and its scheduler. Each engine
// fills one of these in its own file (<engine>_traits.cpp); engine_registry.hpp finds them by name,
// by id or by configuration, so that policy, report and scenario never branch on the engine.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/yaml_section.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/engine_flags.hpp"
#include "sim/engine/parallel_ranks.hpp"
#include "sim/engine/scheduler.hpp"
#include "sim/engine/startup.hpp"

namespace YAML {
class Emitter;
}

namespace headroom::engine {

struct EngineTraits {
  model::Engine id = model::Engine::vllm;
  std::string_view name;   // as scenarios' `engine.kind` and `--engine` spell it: "vllm"
  std::string_view label;  // as reports print it: "vLLM"
  bool (*holds)(const EngineConfig& config) = nullptr;  // whether `config` is this engine's

  // The share of memory the engine sizes itself by: the scenario key (the engine's argument name)
  // and the command-line flag as the engine spells it.
  std::string_view fraction_knob;  // "gpu_memory_utilization"
  std::string_view fraction_flag;  // "--gpu-memory-utilization"
  // true: a share of the memory free when the engine starts (SGLang §2.2); false: of the device.
  bool fraction_of_free_memory = false;
  // The flags that set the largest prefill, the largest graph batch and the KV capacity, for
  // messages that tell a user what to change.
  std::string_view capacity_flags;
  model::KvPoolRules kv_pool;  // the layouts its KV pool offers (model/kv_layout.hpp)
  ParallelRules parallel;      // how it forms its parallel groups (parallel_ranks.hpp)
  // The FlashInfer float workspace it allocates once (§5); nullopt where the size is not known.
  std::optional<Bytes> flashinfer_workspace;

  // The configured fraction; a default the engine computes at start-up stands in as its fallback.
  double (*fraction)(const EngineConfig& config) = nullptr;
  // The fraction the start-up used (a computed default included); 0 when it has none.
  double (*started_fraction)(const StartupResult& startup) = nullptr;
  void (*set_fraction)(EngineConfig& config, double fraction) = nullptr;
  model::KvCacheDtype (*kv_cache_dtype)(const EngineConfig& config) = nullptr;

  // The engine's static arithmetic at `fraction`, without any profile run, in whole blocks and
  // never negative (policy static_fraction).
  std::int64_t (*static_fraction_tokens)(const KvSizingInputs& in, double fraction) = nullptr;
  // The bytes the engine's own arithmetic gives the KV cache at `fraction` before any workspace;
  // nullopt where that arithmetic needs a profile run (vLLM §1.1: policy/kv_budget.hpp
  // measure_profiled).
  std::optional<std::int64_t> (*fraction_kv_bytes)(const KvSizingInputs& in, double fraction) = nullptr;

  // Its knobs in a scenario's `engine:` mapping (knob_yaml.hpp): read with did-you-mean on unknown
  // keys, and written back with every default filled in.
  EngineConfig (*read_knobs)(const YamlSection& section) = nullptr;
  void (*write_knobs)(YAML::Emitter& e, const EngineConfig& config) = nullptr;

  StartupResult (*start)(const Deployment& deployment, const EngineConfig& config,
                         const StartupDirectives& directives) = nullptr;
  std::unique_ptr<Scheduler> (*make_scheduler)(const StartupResult& startup) = nullptr;

  // Its server's command line: launchers, flags and environment variables (<engine>_flags.cpp).
  const EngineCommandLine& (*command_line)() = nullptr;
  // The engine's own flags that give its start-up the KV capacity `startup` got (under a policy that
  // is no engine setting), as a user would paste them.
  std::string (*capacity_setting)(const StartupResult& startup) = nullptr;
};

}  // namespace headroom::engine
