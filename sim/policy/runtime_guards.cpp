// Runtime guards and what-ifs that leave the KV arithmetic alone: a canary released at the first
// OOM, one shared MLA decode buffer instead of one per layer, another allocator configuration.
#include <algorithm>

#include <fmt/format.h>

#include "sim/allocator/alloc_config.hpp"
#include "sim/core/error.hpp"
#include "sim/policy/kv_budget.hpp"
#include "sim/policy/policies.hpp"

namespace headroom::policy {

namespace {

// release_on_oom: the engine's own capacity less `canary` bytes, held after start-up; the first OOM
// frees them to the cache and the step runs again, so one spike up to the canary's size survives
// (and the server then runs without a guard).
class ReleaseOnOom final : public DirectivePolicy {
 public:
  using DirectivePolicy::DirectivePolicy;

 protected:
  void direct(engine::StartupDirectives& directives, engine::EngineConfig&, engine::Deployment&,
              PolicyStart& out) const override {
    directives.canary = spec_.canary;
    out.release_canary_on_oom = true;
    directives.kv_sizer = [this, &out](engine::KvSizingInputs& in) -> engine::KvSizing {
      std::int64_t engine_bytes = 0;
      if (in.engine_tokens) {
        engine_bytes = *in.engine_tokens * static_cast<std::int64_t>(in.kv_bytes_per_token);
      } else {  // vLLM: its own profiled accounting
        auto measured = measure_profiled(in, engine_fraction(in.startup.config));
        if (const auto* why = std::get_if<std::string>(&measured)) return describe(spec_) + ": " + *why;
        engine_bytes = std::get<ProfiledMeasurement>(measured).budget.kv_bytes();
      }
      const std::int64_t tokens = tokens_of(engine_bytes - static_cast<std::int64_t>(spec_.canary), in);
      out.kv_budget = static_cast<Bytes>(std::max<std::int64_t>(engine_bytes, 0));
      out.notes.push_back(fmt::format("the engine's KV capacity less the {} canary: {} KV tokens",
                                      format_bytes(spec_.canary), tokens));
      return tokens;
    };
  }
};

// vLLM #37799/#37805: one module-level MLA decode output buffer shared by every layer, in place of
// #37442's buffer per layer.
class SharedDecodeBuffer final : public DirectivePolicy {
 public:
  using DirectivePolicy::DirectivePolicy;

 protected:
  void direct(engine::StartupDirectives&, engine::EngineConfig& config, engine::Deployment&,
              PolicyStart& out) const override {
    auto* v = std::get_if<engine::VllmConfig>(&config);
    if (v && v->mla_decode_out == model::DecodeOutBuffer::per_layer) {
      v->mla_decode_out = model::DecodeOutBuffer::shared;
      out.notes.push_back("MLA decode output: one shared buffer instead of one per layer");
    } else {
      out.notes.push_back("no per-layer decode buffer in this engine configuration: the engine as configured");
    }
  }
};

class AllocatorWhatIf final : public DirectivePolicy {
 public:
  explicit AllocatorWhatIf(PolicySpec spec) : DirectivePolicy(std::move(spec)) {
    conf_ = alloc::parse_alloc_conf(spec_.alloc_conf, "allocator policy");
  }

 protected:
  void direct(engine::StartupDirectives&, engine::EngineConfig&, engine::Deployment& deployment,
              PolicyStart& out) const override {
    deployment.allocator = conf_;
    out.notes.push_back(fmt::format("PYTORCH_CUDA_ALLOC_CONF={}", spec_.alloc_conf));
  }

 private:
  alloc::AllocatorConfig conf_;
};

}  // namespace

std::unique_ptr<Policy> make_release_on_oom(const PolicySpec& spec) { return std::make_unique<ReleaseOnOom>(spec); }
std::unique_ptr<Policy> make_shared_decode_buffer(const PolicySpec& spec) {
  return std::make_unique<SharedDecodeBuffer>(spec);
}
std::unique_ptr<Policy> make_allocator_what_if(const PolicySpec& spec) { return std::make_unique<AllocatorWhatIf>(spec); }

}  // namespace headroom::policy
