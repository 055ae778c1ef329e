#pragma once
// vLLM v1's KV cache groups for models whose layers attend differently (the hybrid KV-cache
// manager; docs/serving-memory-model.md §1.2b; vllm-project/vllm vllm/v1/core/kv_cache_utils.py
// get_kv_cache_groups, _get_kv_cache_groups_uniform_page_size, get_kv_cache_config_from_groups,
// _max_memory_usage_bytes_from_groups, get_max_concurrency_for_kv_cache_config, commit 001cabc1b;
// vllm/v1/kv_cache_interface.py FullAttentionSpec / SlidingWindowSpec / ChunkedLocalAttentionSpec
// .max_memory_usage_bytes).
//
// Layers are grouped by kind (attention_layers.hpp); each kind is split into groups of group_size
// layers (the fewest layers of any kind, or the most when that is under 1.5 × the fewest), the
// last group of a kind padded. Every group has its own block table per request, but all draw on
// one pool of num_blocks blocks: group_size tensors of page_size × num_blocks bytes, each shared by
// one layer of every group, so num_blocks = available / page_size / group_size.
#include <cstdint>
#include <vector>

#include "sim/engine/kv_request.hpp"
#include "sim/model/attention_layers.hpp"

namespace headroom::engine {

struct VllmKvCacheGroup {
  model::AttentionKind kind = model::AttentionKind::full;
  Tokens window = 0;  // sliding_window or attention_chunk_size; 0 for full attention
  int layers = 0;     // real layers in the group (group_size less padding)
  bool operator==(const VllmKvCacheGroup&) const = default;
};

struct VllmKvCacheGroups {
  std::vector<VllmKvCacheGroup> groups;
  int group_size = 0;  // layers per group, padding included: the KV tensors allocated
  bool operator==(const VllmKvCacheGroups&) const = default;
};

// `hybrid_manager` false (--disable-hybrid-kv-cache-manager): sliding-window and chunked-local
// layers are sized as full attention (unify_hybrid_kv_cache_specs), one group of every layer.
// A pipeline stage groups only its own decoder layers [first_layer, end_layer): each worker builds
// its KV cache spec from the attention layers it holds (vllm/v1/worker/gpu_model_runner.py
// get_kv_cache_spec).
VllmKvCacheGroups vllm_kv_cache_groups(const model::ModelConfig& model, bool hybrid_manager);
VllmKvCacheGroups vllm_kv_cache_groups(const model::ModelConfig& model, bool hybrid_manager, int first_layer,
                                       int end_layer);

// Blocks one request of max_model_len tokens may hold, summed over the groups: full attention
// cdiv(max_model_len, block); a sliding window cdiv(min(window − 1 + max_num_batched_tokens,
// max_model_len), block) + 1 (the window may start inside a block); a chunked-local group
// cdiv(min(attention_chunk_size + max_num_batched_tokens, max_model_len), block).
std::int64_t vllm_request_blocks(const VllmKvCacheGroups& groups, std::int64_t max_model_len,
                                 std::int64_t max_num_batched_tokens, int block_size);

// Whether the non-full groups are chunked local attention (their windows are chunks).
bool vllm_groups_chunked(const VllmKvCacheGroups& groups);

// The sliding windows (or attention chunks) of the groups in order, 0 for full attention
// (PagedKvCache's groups).
std::vector<Tokens> vllm_group_windows(const VllmKvCacheGroups& groups);

}  // namespace headroom::engine
