#pragma once
// The thin portability layer of headroom-calibrate: the few runtime calls and device intrinsics
// it uses, named once, mapped to the CUDA runtime (nvcc) or the HIP runtime (hipcc). Every kernel
// and measurement is written once against these names.
#include <cstdint>
#include <cstring>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define GPU_RUNTIME_NAME "hip"
#define GPU_MALLOC_NAME "hipMalloc"
using gpuError_t = hipError_t;
using gpuEvent_t = hipEvent_t;
using gpuDeviceProp = hipDeviceProp_t;
constexpr gpuError_t gpuSuccess = hipSuccess;
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuMemGetInfo hipMemGetInfo
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemset hipMemset
#define gpuMemcpyHostToDevice(dst, src, n) hipMemcpy(dst, src, n, hipMemcpyHostToDevice)
#define gpuMemcpyDeviceToHost(dst, src, n) hipMemcpy(dst, src, n, hipMemcpyDeviceToHost)
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuGetLastError hipGetLastError
#define gpuGetErrorString hipGetErrorString
#define gpuEventCreate hipEventCreate
#define gpuEventRecord(e) hipEventRecord(e, 0)
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuEventDestroy hipEventDestroy
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuRuntimeGetVersion hipRuntimeGetVersion
// 32-lane groups on both vendors (an AMD wavefront of 64 holds two), so reductions are written once.
#define GPU_SHFL_XOR(value, mask) __shfl_xor(value, mask, 32)
#else
#include <cuda_runtime.h>
#define GPU_RUNTIME_NAME "cuda"
#define GPU_MALLOC_NAME "cudaMalloc"
using gpuError_t = cudaError_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp = cudaDeviceProp;
constexpr gpuError_t gpuSuccess = cudaSuccess;
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuMemGetInfo cudaMemGetInfo
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemset cudaMemset
#define gpuMemcpyHostToDevice(dst, src, n) cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice)
#define gpuMemcpyDeviceToHost(dst, src, n) cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost)
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuGetLastError cudaGetLastError
#define gpuGetErrorString cudaGetErrorString
#define gpuEventCreate cudaEventCreate
#define gpuEventRecord(e) cudaEventRecord(e, 0)
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuEventDestroy cudaEventDestroy
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define GPU_SHFL_XOR(value, mask) __shfl_xor_sync(0xffffffffu, value, mask, 32)
#endif

// bf16 as raw bits, converted by hand: the two runtimes' bf16 types differ, the format does not.
using bf16_bits = std::uint16_t;

__host__ __device__ inline float bf16_to_float(bf16_bits b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest even (NaN is not produced by the calibrator's data).
__host__ __device__ inline bf16_bits float_to_bf16(float f) {
  std::uint32_t u;
  memcpy(&u, &f, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<bf16_bits>(u >> 16);
}
