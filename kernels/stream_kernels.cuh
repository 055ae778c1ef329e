#pragma once
// HBM bandwidth kernels, STREAM's copy and triad (McCalpin, "Memory Bandwidth and Machine Balance",
// 1995) on float4 with a grid-stride loop: copy moves 2 × n × 16 bytes, triad 3 × n × 16.
#include "gpu_runtime.hpp"

__global__ void stream_copy(const float4* __restrict__ a, float4* __restrict__ b, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    b[i] = a[i];
}

__global__ void stream_triad(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             float s, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

// Deterministic pseudo-random bf16 in [-scale, scale): measured kernels read real numbers, not zeros.
__global__ void fill_bf16(bf16_bits* p, std::size_t n, std::uint32_t seed, float scale) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;  // Knuth's multiplicative hash
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = float_to_bf16((static_cast<float>(h & 0xffffu) / 65536.0f - 0.5f) * 2 * scale);
  }
}
