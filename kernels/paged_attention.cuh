#pragma once
// The project's own paged-attention decode kernel: for each sequence and query head, gather the
// sequence's K/V blocks through its block table, dot the query with every cached key, softmax,
// and sum the values by those weights. The cache layout is vLLM's
// [num_blocks, block_size, kv_heads, head_dim] per K and V; grouped-query heads share a KV head.
//
// One thread block of 128 threads per (query head, sequence); its four 32-lane groups take every
// fourth token and keep an online softmax (running max, sum, weighted values: Milakov &
// Gimelshein, "Online normalizer calculation for softmax", 2018), merged at the end.
#include "gpu_runtime.hpp"

namespace paged_attention {

constexpr int kThreads = 128, kGroups = kThreads / 32, kMaxHeadDim = 128;

__global__ void __launch_bounds__(kThreads)
    decode(const bf16_bits* __restrict__ q, const bf16_bits* __restrict__ k_cache,
           const bf16_bits* __restrict__ v_cache, const int* __restrict__ block_table,
           const int* __restrict__ context_lens, bf16_bits* __restrict__ out, int q_heads, int kv_heads,
           int head_dim, int block_size, int max_blocks_per_seq, float scale) {
  const int head = blockIdx.x, seq = blockIdx.y;
  const int kv_head = head / (q_heads / kv_heads);
  const int group = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int per_lane = head_dim / 32;  // head_dim is a multiple of 32, at most kMaxHeadDim
  const int context = context_lens[seq];

  float qv[kMaxHeadDim / 32], acc[kMaxHeadDim / 32];
  for (int i = 0; i < per_lane; ++i) {
    qv[i] = bf16_to_float(q[(static_cast<std::size_t>(seq) * q_heads + head) * head_dim + lane + 32 * i]);
    acc[i] = 0;
  }
  float running_max = -INFINITY, running_sum = 0;
  for (int t = group; t < context; t += kGroups) {
    const int block = block_table[static_cast<std::size_t>(seq) * max_blocks_per_seq + t / block_size];
    const std::size_t base =
        ((static_cast<std::size_t>(block) * block_size + t % block_size) * kv_heads + kv_head) * head_dim;
    float dot = 0;
    for (int i = 0; i < per_lane; ++i) dot += qv[i] * bf16_to_float(k_cache[base + lane + 32 * i]);
    for (int offset = 16; offset > 0; offset /= 2) dot += GPU_SHFL_XOR(dot, offset);
    const float score = dot * scale;
    const float new_max = fmaxf(running_max, score);
    const float correction = expf(running_max - new_max);
    const float p = expf(score - new_max);
    running_sum = running_sum * correction + p;
    for (int i = 0; i < per_lane; ++i)
      acc[i] = acc[i] * correction + p * bf16_to_float(v_cache[base + lane + 32 * i]);
    running_max = new_max;
  }

  __shared__ float group_max[kGroups], group_sum[kGroups], group_acc[kGroups][kMaxHeadDim];
  if (lane == 0) group_max[group] = running_max, group_sum[group] = running_sum;
  for (int i = 0; i < per_lane; ++i) group_acc[group][lane + 32 * i] = acc[i];
  __syncthreads();
  if (static_cast<int>(threadIdx.x) < head_dim) {
    float m = -INFINITY;
    for (int g = 0; g < kGroups; ++g) m = fmaxf(m, group_max[g]);
    float sum = 0, value = 0;
    for (int g = 0; g < kGroups; ++g) {
      const float w = group_sum[g] > 0 ? expf(group_max[g] - m) : 0.0f;
      sum += group_sum[g] * w;
      value += group_acc[g][threadIdx.x] * w;
    }
    out[(static_cast<std::size_t>(seq) * q_heads + head) * head_dim + threadIdx.x] = float_to_bf16(value / sum);
  }
}

}  // namespace paged_attention
