// Device-side access to tensors by kbench.v1.DType, shared by the runner's
// own kernels (harness_kernels.cu, check_kernels.cu). Include from .cu files
// only. Thread safety: pure device functions.
#ifndef KBENCH_RUNNER_DEVICE_DTYPE_ACCESS_CUH_
#define KBENCH_RUNNER_DEVICE_DTYPE_ACCESS_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace kbench {
namespace dtype_access {

// kbench.v1.DType values.
constexpr int kFp32 = 1, kBf16 = 2, kFp16 = 3, kFp64 = 4, kInt32 = 5;

__host__ __device__ inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ inline void Store(void* dst, int dtype, int64_t i, double v) {
  switch (dtype) {
    case kFp32:
      static_cast<float*>(dst)[i] = static_cast<float>(v);
      break;
    case kBf16:
      static_cast<__nv_bfloat16*>(dst)[i] =
          __float2bfloat16_rn(static_cast<float>(v));
      break;
    case kFp16:
      static_cast<__half*>(dst)[i] = __float2half_rn(static_cast<float>(v));
      break;
    case kInt32:
      static_cast<int*>(dst)[i] = __double2int_rn(v);
      break;
    default:
      static_cast<double*>(dst)[i] = v;
  }
}

__device__ inline double Load(const void* src, int dtype, int64_t i) {
  switch (dtype) {
    case kFp32:
      return static_cast<const float*>(src)[i];
    case kBf16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(src)[i]);
    case kFp16:
      return __half2float(static_cast<const __half*>(src)[i]);
    case kInt32:
      return static_cast<const int*>(src)[i];
    default:
      return static_cast<const double*>(src)[i];
  }
}

}  // namespace dtype_access
}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_DTYPE_ACCESS_CUH_
