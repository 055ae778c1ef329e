#pragma once
// The GEMM the calibrator times: the vendor BLAS found at build time (cuBLAS with nvcc, rocBLAS
// with hipcc on a ROCm install), or the project's own kernel (gemm_kernel.cuh) when there is none.
// Every call computes Y[M, N] = X[M, K] · W[N, K]^T in bf16 with fp32 accumulation.
#include <string>

#include "gemm_kernel.cuh"
#include "gpu_runtime.hpp"

#if defined(HEADROOM_HAVE_CUBLAS)
#include <cublas_v2.h>
#elif defined(HEADROOM_HAVE_ROCBLAS)
#include <rocblas/rocblas.h>
#endif

class Gemm {
 public:
  Gemm() {
#if defined(HEADROOM_HAVE_CUBLAS)
    ok_ = cublasCreate(&handle_) == CUBLAS_STATUS_SUCCESS;
#elif defined(HEADROOM_HAVE_ROCBLAS)
    ok_ = rocblas_create_handle(&handle_) == rocblas_status_success;
#endif
  }
  ~Gemm() {
#if defined(HEADROOM_HAVE_CUBLAS)
    if (ok_) cublasDestroy(handle_);
#elif defined(HEADROOM_HAVE_ROCBLAS)
    if (ok_) rocblas_destroy_handle(handle_);
#endif
  }
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  bool ok() const { return ok_; }
  static const char* name() {
#if defined(HEADROOM_HAVE_CUBLAS)
    return "cuBLAS";
#elif defined(HEADROOM_HAVE_ROCBLAS)
    return "rocBLAS";
#else
    return "the project's own kernel (no vendor BLAS at build time)";
#endif
  }

  // Column-major BLAS sees row-major Y[M, N] as Y^T[N, M] = W[N, K] · X^T[K, M]: op(A) = W
  // transposed from its K × N column-major storage, op(B) = X as stored.
  bool run(const bf16_bits* x, const bf16_bits* w, bf16_bits* y, int m, int n, int k) {
#if defined(HEADROOM_HAVE_CUBLAS)
    const float alpha = 1, beta = 0;
    return cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, w, CUDA_R_16BF, k, x, CUDA_R_16BF, k,
                        &beta, y, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
#elif defined(HEADROOM_HAVE_ROCBLAS)
    const float alpha = 1, beta = 0;
    return rocblas_gemm_ex(handle_, rocblas_operation_transpose, rocblas_operation_none, n, m, k, &alpha, w,
                           rocblas_datatype_bf16_r, k, x, rocblas_datatype_bf16_r, k, &beta, y,
                           rocblas_datatype_bf16_r, n, y, rocblas_datatype_bf16_r, n, rocblas_datatype_f32_r,
                           rocblas_gemm_algo_standard, 0, 0) == rocblas_status_success;
#else
    own_gemm::launch(x, w, y, m, n, k);
    return gpuGetLastError() == gpuSuccess;
#endif
  }

 private:
  bool ok_ = true;
#if defined(HEADROOM_HAVE_CUBLAS)
  cublasHandle_t handle_ = nullptr;
#elif defined(HEADROOM_HAVE_ROCBLAS)
  rocblas_handle handle_ = nullptr;
#endif
};
