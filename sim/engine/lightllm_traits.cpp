// LightLLM as the other layers see it (docs/serving-memory-model.md §3).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/engine/engine_registry.hpp"
#include "sim/engine/lightllm_scheduler.hpp"

namespace headroom::engine {

// lightllm_yaml.cpp
EngineConfig read_lightllm_knobs(const YamlSection& s);
void write_lightllm_knobs(YAML::Emitter& e, const EngineConfig& config);
// lightllm_flags.cpp
const EngineCommandLine& lightllm_command_line();

namespace {

const LightllmConfig& of(const EngineConfig& c) { return std::get<LightllmConfig>(c); }

}  // namespace

const EngineTraits& lightllm_traits() {
  static const EngineTraits t{
      .id = model::Engine::lightllm,
      .name = "lightllm",
      .label = "LightLLM",
      .holds = [](const EngineConfig& c) { return std::holds_alternative<LightllmConfig>(c); },
      .fraction_knob = "mem_fraction",
      .fraction_flag = "--mem_fraction",
      .fraction_of_free_memory = false,
      .capacity_flags = "--batch_max_tokens, --graph_max_batch_size, --visual_infer_batch_size, "
                        "--max_total_token_num or --mem_fraction",
      .kv_pool = {.engine = "lightllm", .fp8_ds_mla = false},
      // lightllm/server/api_cli.py (v1.2.0): --dp is data-parallel attention inside --tp (DeepSeek
      // models); no pipeline stages; the custom all-reduce adapted from vLLM's.
      .parallel = {.pp_flag = "", .dp_flag = "--dp", .ep_flag = "", .dp_attention_flag = "", .dp_always_attention = true},
      .flashinfer_workspace = std::nullopt,
      .fraction = [](const EngineConfig& c) { return of(c).mem_fraction; },
      .started_fraction = [](const StartupResult& st) { return of(st.config).mem_fraction; },
      .set_fraction = [](EngineConfig& c, double f) { std::get<LightllmConfig>(c).mem_fraction = f; },
      // §3: the KV cache is stored in the model's dtype.
      .kv_cache_dtype = [](const EngineConfig&) { return model::KvCacheDtype::model; },
      // §3: (free_after − total × (1 − mem_fraction)) / cell, in whole blocks.
      .static_fraction_tokens =
          [](const KvSizingInputs& in, double fraction) {
            return std::max<std::int64_t>(0, in.whole_blocks(lightllm_kv_tokens(
                                                 in.free_after_weights, in.deployment.total(), fraction,
                                                 in.kv_bytes_per_token)));
          },
      .fraction_kv_bytes = [](const KvSizingInputs& in, double fraction) -> std::optional<std::int64_t> {
        return static_cast<std::int64_t>(std::floor(static_cast<double>(in.free_after_weights) -
                                                    static_cast<double>(in.deployment.total()) * (1 - fraction)));
      },
      .read_knobs = read_lightllm_knobs,
      .write_knobs = write_lightllm_knobs,
      .start = [](const Deployment& d, const EngineConfig& c, const StartupDirectives& directives) {
        return lightllm_startup(d, of(c), directives);
      },
      .make_scheduler = [](const StartupResult& st) -> std::unique_ptr<Scheduler> {
        return std::make_unique<LightllmScheduler>(lightllm_scheduler_limits(of(st.config), st.kv_tokens));
      },
      .command_line = lightllm_command_line,
      // §3: --max_total_token_num skips the profile.
      .capacity_setting = [](const StartupResult& st) { return fmt::format("--max_total_token_num {}", st.kv_tokens); },
  };
  return t;
}

}  // namespace headroom::engine
