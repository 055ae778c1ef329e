#include "sim/engine/vllm_kv_cache_groups.hpp"

#include <algorithm>
#include <utility>

namespace headroom::engine {

namespace {

std::int64_t ceil_div_tokens(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

VllmKvCacheGroups vllm_kv_cache_groups(const model::ModelConfig& model, bool hybrid_manager) {
  return vllm_kv_cache_groups(model, hybrid_manager, 0, model.layers);
}

VllmKvCacheGroups vllm_kv_cache_groups(const model::ModelConfig& model, bool hybrid_manager, int first_layer,
                                       int end_layer) {
  VllmKvCacheGroups out;
  std::vector<model::AttentionLayers> kinds;
  for (model::AttentionLayers& k : model::attention_layer_kinds(model)) {
    std::erase_if(k.layers, [&](int layer) { return layer < first_layer || layer >= end_layer; });
    if (!k.layers.empty()) kinds.push_back(std::move(k));
  }
  const int stage_layers = end_layer - first_layer;
  if (!hybrid_manager || kinds.size() <= 1) {
    // One spec for every layer (a uniform model, or the hybrid manager disabled): one group.
    out.groups.push_back({kinds.size() == 1 ? kinds[0].kind : model::AttentionKind::full,
                          kinds.size() == 1 ? kinds[0].window : 0, stage_layers});
    out.group_size = stage_layers;
    return out;
  }
  // _get_kv_cache_groups_uniform_page_size: the fewest layers of a kind, or the most when that is
  // under 1.5 × the fewest ("gpt-oss-20b + eagle, with 12 sw + 13 full").
  std::size_t fewest = kinds[0].layers.size(), most = kinds[0].layers.size();
  for (const auto& k : kinds) {
    fewest = std::min(fewest, k.layers.size());
    most = std::max(most, k.layers.size());
  }
  const std::size_t group_size = 2 * most < 3 * fewest ? most : fewest;
  out.group_size = static_cast<int>(group_size);
  for (const auto& k : kinds) {
    // layers[i::num_groups] form group i, so the padding spreads over the last groups.
    const std::size_t num_groups = (k.layers.size() + group_size - 1) / group_size;
    for (std::size_t i = 0; i < num_groups; ++i) {
      const std::size_t real = (k.layers.size() - i + num_groups - 1) / num_groups;
      out.groups.push_back({k.kind, k.window, static_cast<int>(real)});
    }
  }
  return out;
}

std::int64_t vllm_request_blocks(const VllmKvCacheGroups& groups, std::int64_t max_model_len,
                                 std::int64_t max_num_batched_tokens, int block_size) {
  std::int64_t blocks = 0;
  for (const VllmKvCacheGroup& g : groups.groups) {
    if (g.kind == model::AttentionKind::full) {
      blocks += ceil_div_tokens(max_model_len, block_size);
    } else if (g.kind == model::AttentionKind::chunked_local) {
      // ChunkedLocalAttentionSpec.max_memory_usage_bytes: the current chunk plus one step's tokens.
      blocks += ceil_div_tokens(std::min(g.window + max_num_batched_tokens, max_model_len), block_size);
    } else {
      const std::int64_t tokens = std::min(g.window - 1 + max_num_batched_tokens, max_model_len);
      blocks += ceil_div_tokens(tokens, block_size) + 1;
    }
  }
  return blocks;
}

bool vllm_groups_chunked(const VllmKvCacheGroups& groups) {
  return std::any_of(groups.groups.begin(), groups.groups.end(),
                     [](const VllmKvCacheGroup& g) { return g.kind == model::AttentionKind::chunked_local; });
}

std::vector<Tokens> vllm_group_windows(const VllmKvCacheGroups& groups) {
  std::vector<Tokens> windows;
  for (const VllmKvCacheGroup& g : groups.groups)
    windows.push_back(g.kind == model::AttentionKind::full ? 0 : g.window);
  return windows;
}

}  // namespace headroom::engine
