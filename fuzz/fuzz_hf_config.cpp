// Fuzz target: a Hugging Face config.json (load_hf_config on a file, as `model: name: path/` reads
// it): the JSON parse and every key's type and range checks, then the figures derived from the
// model (KV bytes per token, weight bytes) that a scenario computes next.
#include <cstddef>
#include <cstdint>

#include "fuzz/support/scratch_file.hpp"
#include "sim/core/error.hpp"
#include "sim/model/hf_config.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/weights.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto file = headroom::fuzz::scratch().write("config.json", headroom::fuzz::as_text(data, size));
    const headroom::model::ModelConfig config = headroom::model::load_hf_config(file);
    using headroom::model::Engine;
    for (Engine engine : {Engine::vllm, Engine::sglang, Engine::lightllm})
      (void)headroom::model::kv_layout(config, engine, headroom::model::KvCacheDtype::model);
    (void)headroom::model::parameter_count(config);
    (void)headroom::model::model_weights(config);
  } catch (const headroom::InputError&) {
  }
  return 0;
}
