// vLLM as the other layers see it (docs/serving-memory-model.md §1).
#include <cmath>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/engine/engine_registry.hpp"
#include "sim/engine/vllm_scheduler.hpp"

namespace headroom::engine {

// vllm_yaml.cpp
EngineConfig read_vllm_knobs(const YamlSection& s);
void write_vllm_knobs(YAML::Emitter& e, const EngineConfig& config);
// vllm_flags.cpp
const EngineCommandLine& vllm_command_line();

namespace {

const VllmConfig& of(const EngineConfig& c) { return std::get<VllmConfig>(c); }

// §1.1 without its profile terms: total × gpu_memory_utilization − weights.
std::int64_t static_tokens(const KvSizingInputs& in, double fraction) {
  const auto requested = static_cast<std::int64_t>(std::floor(static_cast<double>(in.deployment.total()) * fraction));
  const auto weights = static_cast<std::int64_t>(in.free_before_weights - in.free_after_weights);
  return in.tokens_in(requested - weights);
}

}  // namespace

const EngineTraits& vllm_traits() {
  static const EngineTraits t{
      .id = model::Engine::vllm,
      .name = "vllm",
      .label = "vLLM",
      .holds = [](const EngineConfig& c) { return std::holds_alternative<VllmConfig>(c); },
      .fraction_knob = "gpu_memory_utilization",
      .fraction_flag = "--gpu-memory-utilization",
      .fraction_of_free_memory = false,
      .capacity_flags = "--max-num-batched-tokens, --max-num-seqs (the largest graph batch), "
                        "--num-gpu-blocks-override or --gpu-memory-utilization",
      .kv_pool = {.engine = "vllm", .fp8_ds_mla = true},
      // vllm/engine/arg_utils.py flags; fused_moe/config.py FusedMoEParallelConfig.make flattens the
      // MoE layers over dp × tp; custom_all_reduce.py for the TP group.
      .parallel = {.pp_flag = "--pipeline-parallel-size",
                   .dp_flag = "--data-parallel-size",
                   .ep_flag = "--enable-expert-parallel",
                   .dp_attention_flag = "",
                   .moe_over_data_parallel = true},
      .flashinfer_workspace = model::kVllmFlashInferWorkspace,
      .fraction = [](const EngineConfig& c) { return of(c).gpu_memory_utilization; },
      .started_fraction = [](const StartupResult& st) { return of(st.config).gpu_memory_utilization; },
      .set_fraction = [](EngineConfig& c, double f) { std::get<VllmConfig>(c).gpu_memory_utilization = f; },
      .kv_cache_dtype = [](const EngineConfig& c) { return of(c).kv_cache_dtype; },
      .static_fraction_tokens = static_tokens,
      // §1.1: the budget needs the profile run's activation peak (policy measure_profiled).
      .fraction_kv_bytes = [](const KvSizingInputs&, double) -> std::optional<std::int64_t> { return std::nullopt; },
      .read_knobs = read_vllm_knobs,
      .write_knobs = write_vllm_knobs,
      .start = [](const Deployment& d, const EngineConfig& c, const StartupDirectives& directives) {
        return vllm_startup(d, of(c), directives);
      },
      .make_scheduler = [](const StartupResult& st) -> std::unique_ptr<Scheduler> {
        VllmSchedulerLimits limits = vllm_scheduler_limits(of(st.config), st.kv_blocks);
        limits.group_windows = st.kv_group_windows;
        limits.chunked_local = st.kv_groups_chunked;
        return std::make_unique<VllmScheduler>(limits);
      },
      .command_line = vllm_command_line,
      // §1.1: --kv-cache-memory-bytes skips the memory accounting; §1.2: --num-gpu-blocks-override
      // replaces the computed block count.
      .capacity_setting =
          [](const StartupResult& st) {
            return fmt::format("--kv-cache-memory-bytes {} (or --num-gpu-blocks-override {})", st.bytes.kv_cache,
                               st.kv_blocks);
          },
  };
  return t;
}

}  // namespace headroom::engine
