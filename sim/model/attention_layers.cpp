#include "sim/model/attention_layers.hpp"

#include <algorithm>

namespace headroom::model {

std::vector<AttentionLayers> attention_layer_kinds(const ModelConfig& config) {
  AttentionLayers full{AttentionKind::full, 0, {}};
  AttentionLayers sliding{AttentionKind::sliding_window, config.sliding_window, {}};
  for (int l = 0; l < config.layers; ++l) {
    const bool windowed = std::binary_search(config.sliding_layers.begin(), config.sliding_layers.end(), l);
    (windowed ? sliding : full).layers.push_back(l);
  }
  std::vector<AttentionLayers> kinds;
  const bool sliding_first = !sliding.layers.empty() && (full.layers.empty() || sliding.layers[0] < full.layers[0]);
  if (sliding_first) kinds.push_back(std::move(sliding));
  if (!full.layers.empty()) kinds.push_back(std::move(full));
  if (!sliding_first && !sliding.layers.empty()) kinds.push_back(std::move(sliding));
  return kinds;
}

}  // namespace headroom::model
