// The latency tests' reference deployment: Llama-3.1-8B, bf16, TP1, on the built-in H100 profile.
#pragma once

#include "sim/device/gpu_profile.hpp"
#include "sim/latency/step_latency.hpp"
#include "sim/model/catalogue.hpp"

namespace headroom::test {

inline latency::StepLatencyModel llama_h100() {
  return latency::StepLatencyModel(model::catalogue_model("Llama-3.1-8B"), 1, model::KvCacheDtype::model, model::DType::bf16,
                          device::load_gpu_profile("h100-sxm-80gb"));
}

}  // namespace headroom::test
