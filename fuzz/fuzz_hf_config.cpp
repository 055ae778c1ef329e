// Fuzz target: a Hugging Face config.json (load_hf_config on a file, as `model: name: path/` reads
// it): the JSON parse and every key's type and range checks, then the figures derived from the
// model (KV bytes per token, weight bytes, the attention kinds of the layers) that a scenario
// computes next. Property: within the limits of model_limits.hpp no size wraps (a parameter count
// is positive, bytes cover 4 bits of it), and every layer has exactly one attention kind.
#include <cstddef>
#include <cstdint>

#include "fuzz/support/finding.hpp"
#include "fuzz/support/scratch_file.hpp"
#include "sim/core/error.hpp"
#include "sim/model/attention_layers.hpp"
#include "sim/model/hf_config.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/weights.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto file = headroom::fuzz::scratch().write("config.json", headroom::fuzz::as_text(data, size));
    const headroom::model::ModelConfig config = headroom::model::load_hf_config(file);
    using headroom::model::Engine;
    for (Engine engine : {Engine::vllm, Engine::sglang, Engine::lightllm}) {
      const auto kv = headroom::model::kv_layout(config, engine, headroom::model::KvCacheDtype::model);
      headroom::fuzz::require(kv.bytes_per_token >= kv.bytes_per_token_per_layer, "KV bytes per token wrapped");
    }
    std::size_t kinds_layers = 0;
    for (const auto& kind : headroom::model::attention_layer_kinds(config)) {
      kinds_layers += kind.layers.size();
      for (int l : kind.layers) headroom::fuzz::require(l >= 0 && l < config.layers, "a windowed layer is out of range");
    }
    headroom::fuzz::require(kinds_layers == static_cast<std::size_t>(config.layers), "layers miss or repeat a kind");
    const std::int64_t parameters = headroom::model::parameter_count(config);
    headroom::fuzz::require(parameters > 0, "the parameter count is not positive");
    const auto weights = headroom::model::model_weights(config);
    // The smallest weight format stores 4 bits per parameter (GPTQ/AWQ int4, MXFP4, NVFP4, before
    // their scales), so the bytes cover at least half the parameter count; fewer means a wrap.
    headroom::fuzz::require(weights.bytes >= static_cast<std::uint64_t>(weights.parameters) / 2, "weight bytes wrapped");
  } catch (const headroom::InputError&) {
  }
  return 0;
}
