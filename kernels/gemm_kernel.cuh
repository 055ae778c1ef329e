#pragma once
// The project's own bf16 GEMM, used where no vendor BLAS was found at build time:
// Y[M, N] = X[M, K] · W[N, K]^T (a linear layer), bf16 in and out, fp32 accumulation.
// 64 × 64 output tiles over 32-wide K slices in shared memory, 256 threads of 4 × 4 outputs each.
// It runs on the vector units, not tensor/matrix cores, so it is far below a vendor BLAS; the
// fitted efficiencies then describe it, which `--help` and the profile's source_note say.
#include "gpu_runtime.hpp"

namespace own_gemm {

constexpr int kTileM = 64, kTileN = 64, kTileK = 32, kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    gemm_xwt(const bf16_bits* __restrict__ x, const bf16_bits* __restrict__ w, bf16_bits* __restrict__ y, int m,
             int n, int k) {
  __shared__ float xs[kTileK][kTileM + 1];
  __shared__ float ws[kTileK][kTileN + 1];
  const int tid = threadIdx.x;
  const int tm = tid / 16, tn = tid % 16;  // this thread's 4 × 4 outputs
  const int m0 = blockIdx.y * kTileM, n0 = blockIdx.x * kTileN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < k; k0 += kTileK) {
    for (int e = tid; e < kTileM * kTileK; e += kThreads) {
      const int row = e / kTileK, col = e % kTileK;
      const int gk = k0 + col;
      xs[col][row] = (m0 + row < m && gk < k) ? bf16_to_float(x[static_cast<std::size_t>(m0 + row) * k + gk]) : 0.0f;
      ws[col][row] = (n0 + row < n && gk < k) ? bf16_to_float(w[static_cast<std::size_t>(n0 + row) * k + gk]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kTileK; ++kk) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = xs[kk][tm * 4 + i];
      for (int j = 0; j < 4; ++j) b[j] = ws[kk][tn * 4 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = m0 + tm * 4 + i, c = n0 + tn * 4 + j;
      if (r < m && c < n) y[static_cast<std::size_t>(r) * n + c] = float_to_bf16(acc[i][j]);
    }
}

inline void launch(const bf16_bits* x, const bf16_bits* w, bf16_bits* y, int m, int n, int k) {
  const dim3 grid((n + kTileN - 1) / kTileN, (m + kTileM - 1) / kTileM);
  gemm_xwt<<<grid, kThreads>>>(x, w, y, m, n, k);
}

}  // namespace own_gemm
