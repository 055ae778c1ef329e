// auto_profile: LightLLM PR #1273's two-pass start-up (docs/serving-memory-model.md §3), for any engine.
// 1. Probe: KV of max(min_probe_tokens, prefill + graph batch) tokens, graphs captured as usual,
//    then the stress (a prefill of the engine's largest prefill, a decode of its largest graph
//    batch); the peak reserved memory is the measurement.
// 2. Target: non_kv = peak reserved − probe KV bytes; peer = total − free − own reserved (other
//    processes and the context); budget = total − non_kv − canary − peer;
//    target = budget × mem_fraction / cell.
// 3. Rebuild at the target (the probe torn down and empty_cache'd: a fresh start-up with the
//    weights alone, which is the state the teardown leaves), re-capture graphs, hold the canary.
// 4. Validate with the same stress; on OOM shrink by `shrink` and retry, at most max_retries
//    times, then fail naming the knobs to change.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/engine_registry.hpp"
#include "sim/engine/startup.hpp"
#include "sim/policy/policies.hpp"

namespace headroom::policy {

namespace {

// The knobs that set the stress and the budget, in each engine's own spelling.
std::string knobs_to_change(model::Engine engine) { return std::string(engine::engine_traits(engine).capacity_flags); }

engine::StartupDirectives fixed_capacity(std::int64_t tokens, Bytes canary) {
  engine::StartupDirectives d;
  d.kv_sizer = [tokens](engine::KvSizingInputs&) -> engine::KvSizing { return tokens; };
  d.canary = canary;
  return d;
}

class AutoProfile final : public Policy {
 public:
  explicit AutoProfile(PolicySpec spec) : spec_(std::move(spec)) {}
  const PolicySpec& spec() const override { return spec_; }

  PolicyStart start(const engine::Deployment& d, const engine::EngineConfig& config) const override {
    PolicyStart out;
    // 1. Probe.
    std::int64_t prefill = 0, graph_batch = 0, probe_tokens = 0;
    int block = 1;
    Bytes cell = 0;
    engine::StartupDirectives probe_directives;
    probe_directives.skip_capacity_checks = true;
    probe_directives.kv_sizer = [&](engine::KvSizingInputs& in) -> engine::KvSizing {
      prefill = in.prefill_tokens;
      graph_batch = in.max_graph_batch;
      block = in.kv_block_tokens;
      cell = in.kv_bytes_per_token;
      probe_tokens = std::max(spec_.min_probe_tokens, prefill + graph_batch);
      return probe_tokens;
    };
    engine::StartupResult probe = engine::start_engine(d, config, probe_directives);
    out.attempted_kv_tokens.push_back(probe.kv_tokens);
    if (!probe.ok) {
      out.notes.push_back(fmt::format("probe with {} KV tokens failed at {}", probe_tokens,
                                      engine::startup_stage_name(probe.stage)));
      out.startup = std::move(probe);
      return out;
    }
    engine::StressMeasurement s = engine::stress(probe, d, prefill, graph_batch);
    if (!s.ok) {
      engine::fail(probe, engine::StartupStage::kv_cache_sizing,
                   fmt::format("auto-profile: the probe's stress ran out of memory in {} with only {} KV tokens; "
                               "change {}",
                               s.oom_tensor, probe.kv_tokens, knobs_to_change(probe.engine)));
      probe.oom = s.oom;
      out.startup = std::move(probe);
      return out;
    }
    // 2. Target.
    const Bytes total = d.total();
    const Bytes own_reserved = probe.memory.allocator->reserved_bytes();
    const Bytes free_now = probe.memory.device->free_bytes();
    const auto non_kv = static_cast<std::int64_t>(s.peak_reserved) - static_cast<std::int64_t>(probe.bytes.kv_cache);
    const Bytes peer = total > free_now + own_reserved ? total - free_now - own_reserved : 0;
    const std::int64_t budget = static_cast<std::int64_t>(total) - non_kv - static_cast<std::int64_t>(spec_.canary) -
                                static_cast<std::int64_t>(peer);
    out.kv_budget = budget > 0 ? static_cast<Bytes>(budget) : 0;
    out.device_budget = total > spec_.canary + peer ? total - spec_.canary - peer : 0;
    out.device_budget_rule = "auto_profile: capacity − canary − other processes and context";
    std::int64_t target =
        budget > 0 ? static_cast<std::int64_t>(std::floor(static_cast<double>(budget) * spec_.mem_fraction /
                                                          static_cast<double>(cell)))
                   : 0;
    target = target / block * block;
    out.notes.push_back(fmt::format(
        "probe {} KV tokens: peak reserved {}, non-KV {}, peer {} → budget {} → target {} tokens",
        probe.kv_tokens, format_bytes(s.peak_reserved), format_bytes(static_cast<Bytes>(std::max<std::int64_t>(non_kv, 0))),
        format_bytes(peer), format_bytes(out.kv_budget.value_or(0)), target));
    if (target <= 0) {
      engine::fail(probe, engine::StartupStage::kv_cache_sizing,
                   fmt::format("auto-profile: no memory left for the KV cache after the measured non-KV peak {} "
                               "and the {} canary; change {}",
                               format_bytes(static_cast<Bytes>(std::max<std::int64_t>(non_kv, 0))),
                               format_bytes(spec_.canary), knobs_to_change(probe.engine)));
      out.startup = std::move(probe);
      return out;
    }
    probe = engine::StartupResult{};  // 3. tear the probe down
    // 3–4. Rebuild, validate, shrink and retry.
    std::int64_t tokens = target;
    std::string last_failure;
    out.attempts = 0;
    for (int attempt = 0; attempt <= spec_.max_retries; ++attempt) {
      if (attempt > 0) tokens = static_cast<std::int64_t>(std::floor(static_cast<double>(tokens) * (1 - spec_.shrink))) / block * block;
      ++out.attempts;
      out.attempted_kv_tokens.push_back(tokens);
      engine::StartupResult st = engine::start_engine(d, config, fixed_capacity(tokens, spec_.canary));
      if (!st.ok) {
        last_failure = fmt::format("start-up failed at {}: {}", engine::startup_stage_name(st.stage), st.failure);
        out.notes.push_back(fmt::format("attempt {} with {} KV tokens: {}", attempt + 1, tokens, last_failure));
        out.startup = std::move(st);
        if (!out.startup.oom) return out;  // an engine check, not memory: shrinking cannot help
        continue;
      }
      engine::StressMeasurement v = engine::stress(st, d, prefill, graph_batch);
      if (v.ok) {
        out.notes.push_back(fmt::format("attempt {} with {} KV tokens: the stress fits", attempt + 1, tokens));
        out.startup = std::move(st);
        return out;
      }
      last_failure = "the stress ran out of memory in " + v.oom_tensor;
      out.notes.push_back(fmt::format("attempt {} with {} KV tokens: {}", attempt + 1, tokens, last_failure));
      st.oom = v.oom;
      out.startup = std::move(st);
    }
    engine::fail(out.startup, engine::StartupStage::kv_cache_sizing,
                 fmt::format("auto-profile gave up after {} attempts ({} → {} KV tokens): {}; change {}", out.attempts,
                             target, tokens, last_failure, knobs_to_change(out.startup.engine)));
    return out;
  }

 private:
  PolicySpec spec_;
};

}  // namespace

std::unique_ptr<Policy> make_auto_profile(const PolicySpec& spec) { return std::make_unique<AutoProfile>(spec); }

}  // namespace headroom::policy
