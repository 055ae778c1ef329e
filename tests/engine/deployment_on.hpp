#pragma once
// One rank of a deployment from a built-in GPU profile and a catalogue model, as the engine and
// policy tests build them.
#include <string>

#include "sim/device/gpu_profile.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/model/catalogue.hpp"

namespace headroom::engine::test {

inline Deployment on(const std::string& gpu, const std::string& model = "Llama-3.1-8B", int tp = 1) {
  Deployment d;
  d.model = model::catalogue_model(model);
  d.gpu = device::load_gpu_profile(gpu);
  d.tp = tp;
  return d;
}

}  // namespace headroom::engine::test
