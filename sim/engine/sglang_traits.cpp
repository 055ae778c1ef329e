// SGLang as the other layers see it (docs/serving-memory-model.md §2).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/engine/engine_registry.hpp"
#include "sim/engine/sglang_scheduler.hpp"

namespace headroom::engine {

// sglang_yaml.cpp
EngineConfig read_sglang_knobs(const YamlSection& s);
void write_sglang_knobs(YAML::Emitter& e, const EngineConfig& config);
// sglang_flags.cpp
const EngineCommandLine& sglang_command_line();

namespace {

const SglangConfig& of(const EngineConfig& c) { return std::get<SglangConfig>(c); }

}  // namespace

const EngineTraits& sglang_traits() {
  static const EngineTraits t{
      .id = model::Engine::sglang,
      .name = "sglang",
      .label = "SGLang",
      .holds = [](const EngineConfig& c) { return std::holds_alternative<SglangConfig>(c); },
      .fraction_knob = "mem_fraction_static",
      .fraction_flag = "--mem-fraction-static",
      // §2.2: mem_fraction_static is a share of the memory free before the weights.
      .fraction_of_free_memory = true,
      .capacity_flags = "--chunked-prefill-size, --cuda-graph-max-bs, --max-total-tokens or --mem-fraction-static",
      .kv_pool = {.engine = "sglang", .fp8_ds_mla = false},
      // python/sglang/srt/server_args.py flags; layers/dp_attention.py: attention TP = tp / dp with
      // --enable-dp-attention; moe_tp_size = tp / ep; custom_all_reduce.py for the TP group.
      .parallel = {.pp_flag = "--pp-size",
                   .dp_flag = "--dp-size",
                   .ep_flag = "--ep-size",
                   .dp_attention_flag = "--enable-dp-attention",
                   .ep_divides_tp = true},
      .flashinfer_workspace = model::kSglangFlashInferWorkspace,
      // 0.88: §2.1's default when the GPU memory is unknown.
      .fraction = [](const EngineConfig& c) { return of(c).mem_fraction_static.value_or(0.88); },
      .started_fraction =
          [](const StartupResult& st) {
            const auto* f = std::get_if<SglangFigures>(&st.figures);
            return f && f->mem_fraction_static > 0 ? f->mem_fraction_static : of(st.config).mem_fraction_static.value_or(0);
          },
      .set_fraction = [](EngineConfig& c, double f) { std::get<SglangConfig>(c).mem_fraction_static = f; },
      .kv_cache_dtype = [](const EngineConfig& c) { return of(c).kv_cache_dtype; },
      // §2.2: (free_after − free_before × (1 − fraction)) / cell, in whole pages.
      .static_fraction_tokens =
          [](const KvSizingInputs& in, double fraction) {
            return std::max<std::int64_t>(0, sglang_profile_max_num_token(in.free_before_weights, in.free_after_weights,
                                                                          fraction, in.kv_bytes_per_token,
                                                                          in.kv_block_tokens));
          },
      // §2.2 without the aiter × 0.85 of §2.5.
      .fraction_kv_bytes = [](const KvSizingInputs& in, double fraction) -> std::optional<std::int64_t> {
        return static_cast<std::int64_t>(std::floor(static_cast<double>(in.free_after_weights) -
                                                    static_cast<double>(in.free_before_weights) * (1 - fraction)));
      },
      .read_knobs = read_sglang_knobs,
      .write_knobs = write_sglang_knobs,
      .start = [](const Deployment& d, const EngineConfig& c, const StartupDirectives& directives) {
        return sglang_startup(d, of(c), directives);
      },
      .make_scheduler = [](const StartupResult& st) -> std::unique_ptr<Scheduler> {
        const auto* f = std::get_if<SglangFigures>(&st.figures);
        return std::make_unique<SglangScheduler>(sglang_scheduler_limits(of(st.config), st.kv_tokens,
                                                                         st.max_running_requests,
                                                                         f ? f->swa_tokens : 0,
                                                                         f ? f->sliding_window : 0));
      },
      .command_line = sglang_command_line,
      // §2.2: --max-total-tokens can only lower the pool the fraction's profile gives.
      .capacity_setting =
          [](const StartupResult& st) {
            // With the SWA pool --max-total-tokens caps the tokens before the split (§2.2).
            const auto* f = std::get_if<SglangFigures>(&st.figures);
            if (f && f->swa_tokens > 0)
              return fmt::format("--max-total-tokens {} (it only lowers the pool --mem-fraction-static sizes; "
                                 "split into {} full and {} SWA tokens)",
                                 f->unsplit_tokens, st.kv_tokens, f->swa_tokens);
            return fmt::format("--max-total-tokens {} (it only lowers the pool --mem-fraction-static sizes)",
                               st.kv_tokens);
          },
  };
  return t;
}

}  // namespace headroom::engine
