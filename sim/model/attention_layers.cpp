#include "sim/model/attention_layers.hpp"

#include <algorithm>

namespace headroom::model {

std::vector<AttentionLayers> attention_layer_kinds(const ModelConfig& config) {
  AttentionLayers full{AttentionKind::full, 0, {}};
  AttentionLayers sliding{AttentionKind::sliding_window, config.sliding_window, {}};
  AttentionLayers chunked{AttentionKind::chunked_local, config.attention_chunk, {}};
  auto listed = [](const std::vector<int>& layers, int l) { return std::binary_search(layers.begin(), layers.end(), l); };
  for (int l = 0; l < config.layers; ++l) {
    if (listed(config.sliding_layers, l))
      sliding.layers.push_back(l);
    else if (listed(config.chunked_layers, l))
      chunked.layers.push_back(l);
    else
      full.layers.push_back(l);
  }
  std::vector<AttentionLayers> kinds;
  for (AttentionLayers* k : {&full, &sliding, &chunked})
    if (!k->layers.empty()) kinds.push_back(std::move(*k));
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const AttentionLayers& a, const AttentionLayers& b) { return a.layers[0] < b.layers[0]; });
  return kinds;
}

}  // namespace headroom::model
