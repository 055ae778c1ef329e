#include "sim/model/rotary_cache.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>

#include <fmt/format.h>

namespace headroom::model {

Bytes RotaryTable::bytes() const {
  return static_cast<Bytes>(positions) * static_cast<Bytes>(width) * dtype_bytes(dtype);
}

std::int64_t get_rope_positions(RopeScaling scaling, double factor, std::int64_t max_position,
                                std::int64_t original_max_position) {
  switch (scaling) {
    case RopeScaling::none:
    case RopeScaling::llama3:  // Llama3RotaryEmbedding rescales frequencies, not positions
      return max_position;
    case RopeScaling::linear:   // LinearScalingRotaryEmbedding: max_len = max_position × factor
    case RopeScaling::dynamic:  // DynamicNTKScalingRotaryEmbedding: the same max_len
      return static_cast<std::int64_t>(std::ceil(static_cast<double>(max_position) * factor));
    case RopeScaling::yarn:  // YaRN/DeepseekScaling: arange(original_max_position × factor)
      return static_cast<std::int64_t>(std::ceil(static_cast<double>(original_max_position) * factor));
  }
  return max_position;
}

namespace {

RotaryTable cos_sin_cache(const ModelConfig& c, const RotaryRules& rules, std::vector<int> layers, bool scaled) {
  RotaryTable t;
  t.layers = std::move(layers);
  t.name = fmt::format("model.layers.{}.self_attn.rotary_emb.cos_sin_cache", t.layers.front());
  t.positions = scaled ? get_rope_positions(c.rope_scaling, c.rope_factor, c.max_position, c.rope_original_max_position)
                       : c.max_position;
  // MLA rotates only the qk_rope_head_dim part (deepseek_v2.py get_rope(qk_rope_head_dim, ...)).
  t.width = c.is_mla() ? c.qk_rope_head_dim : c.head_dim;
  // gpt_oss.py OAIAttention asks get_rope for dtype=torch.float32; other models the default dtype.
  t.dtype = rules.float32 || c.architecture == Architecture::gpt_oss ? DType::fp32 : c.dtype;
  // gpt_oss.py builds rotary_emb first in OAIAttention.__init__; the other models after o_proj.
  t.before_attention = c.architecture == Architecture::gpt_oss;
  return t;
}

}  // namespace

std::vector<RotaryTable> rotary_tables(const ModelConfig& c, const RotaryRules& rules) {
  std::vector<int> all;
  for (int l = 0; l < c.layers; ++l) all.push_back(l);
  if (c.architecture == Architecture::llama4) {
    // llama4.py: rotary_emb is None on the NoPE layers; the RoPE layers are the chunked ones.
    if (c.chunked_layers.empty()) return {};
    return {cos_sin_cache(c, rules, c.chunked_layers, true)};
  }
  if (c.architecture == Architecture::gemma3_text && c.local_rope && !c.sliding_layers.empty()) {
    // gemma3.py: sliding layers get_rope(base=rope_local_base_freq, rope_scaling default), the
    // others rope_theta and rope_scaling: two keys of _ROPE_DICT, two tables.
    std::vector<int> global;
    std::set_difference(all.begin(), all.end(), c.sliding_layers.begin(), c.sliding_layers.end(),
                        std::back_inserter(global));
    std::vector<RotaryTable> tables{cos_sin_cache(c, rules, c.sliding_layers, false)};
    if (!global.empty()) {
      RotaryTable g = cos_sin_cache(c, rules, std::move(global), true);
      if (g.layers.front() < tables.front().layers.front())
        tables.insert(tables.begin(), std::move(g));
      else
        tables.push_back(std::move(g));
    }
    return tables;
  }
  return {cos_sin_cache(c, rules, std::move(all), true)};
}

std::vector<std::ptrdiff_t> rotary_load_positions(const WeightList& weights, const std::vector<RotaryTable>& tables) {
  // One pass: each layer's first attention tensor and last o_proj tensor in load order.
  std::vector<std::ptrdiff_t> first_attention;
  std::vector<std::ptrdiff_t> after_o_proj;
  constexpr std::string_view kLayers = "model.layers.";
  for (std::size_t i = 0; i < weights.tensors.size(); ++i) {
    std::string_view name = weights.tensors[i].name;
    if (!name.starts_with(kLayers)) continue;
    name.remove_prefix(kLayers.size());
    std::size_t digits = 0;
    int layer = 0;
    while (digits < name.size() && digits < 9 && name[digits] >= '0' && name[digits] <= '9')
      layer = layer * 10 + (name[digits++] - '0');
    if (digits == 0) continue;
    name.remove_prefix(digits);
    if (!name.starts_with(".self_attn.")) continue;
    const auto l = static_cast<std::size_t>(layer);
    if (first_attention.size() <= l) {
      first_attention.resize(l + 1, -1);
      after_o_proj.resize(l + 1, -1);
    }
    if (first_attention[l] < 0) first_attention[l] = static_cast<std::ptrdiff_t>(i);
    if (name.starts_with(".self_attn.o_proj.")) after_o_proj[l] = static_cast<std::ptrdiff_t>(i) + 1;
  }
  std::vector<std::ptrdiff_t> positions;
  for (const RotaryTable& t : tables) {
    std::ptrdiff_t at = -1;
    for (int layer : t.layers) {
      const auto l = static_cast<std::size_t>(layer);
      if (l >= first_attention.size() || first_attention[l] < 0) continue;  // not on this rank
      at = t.before_attention || after_o_proj[l] < 0 ? first_attention[l] : after_o_proj[l];
      break;
    }
    positions.push_back(at);
  }
  return positions;
}

}  // namespace headroom::model
