#include <cstdint>

#include "runner/device/check_kernels.h"
#include "runner/device/dtype_access.cuh"

namespace kbench {
namespace {

constexpr int kThreads = 256;
// Elements per thread before another block is worth its launch.
constexpr int64_t kPerThread = 8;

// Reduces each thread's `mine` into block-wide partials[blockIdx.x], in a
// fixed tree order; `merge(b, &a)` folds b into a.
template <typename T, typename Merge>
__device__ void BlockReduce(T mine, T* partials, Merge merge) {
  __shared__ T shared[kThreads];
  shared[threadIdx.x] = mine;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      merge(shared[threadIdx.x + stride], &shared[threadIdx.x]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = shared[0];
}

__global__ void OutputErrorsKernel(const void* out, int dtype, double constant,
                                   const double* ref, int64_t n, double atol,
                                   double rtol, OutputErrors* partials) {
  OutputErrors e = ZeroOutputErrors();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const double o =
        out != nullptr ? dtype_access::Load(out, dtype, i) : constant;
    AddOutputError(o, ref[i], i, atol, rtol, &e);
  }
  BlockReduce(e, partials, [](const OutputErrors& b, OutputErrors* a) {
    MergeOutputErrors(b, a);
  });
}

__global__ void RunDiffKernel(const void* first, const void* second, int dtype,
                              int64_t n, double atol, double rtol,
                              RunDiff* partials) {
  RunDiff d = ZeroRunDiff();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    AddRunDiff(dtype_access::Load(first, dtype, i),
               dtype_access::Load(second, dtype, i), i, atol, rtol, &d);
  }
  BlockReduce(d, partials,
              [](const RunDiff& b, RunDiff* a) { MergeRunDiff(b, a); });
}

__global__ void KeyedChecksumKernel(const uint8_t* data, int64_t bytes,
                                    uint64_t key, uint64_t* partials) {
  const int64_t words = (bytes + 3) / 4;
  const int64_t whole = bytes / 4;
  uint64_t sum = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < words;
       i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t word = 0;
    if (i < whole) {
      word = reinterpret_cast<const uint32_t*>(data)[i];
    } else {
      for (int64_t j = 0; i * 4 + j < bytes; ++j) {
        word |= static_cast<uint32_t>(data[i * 4 + j]) << (8 * j);
      }
    }
    sum += ChecksumWord(key, static_cast<uint64_t>(i), word);
  }
  BlockReduce(sum, partials, [](const uint64_t& b, uint64_t* a) { *a += b; });
}

__global__ void ValueSummaryKernel(const double* values, int64_t n,
                                   ValueSummary* partials) {
  ValueSummary s;
  s.sum = 0;
  s.nonfinite = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    s.sum += values[i];
    s.nonfinite += !isfinite(values[i]);
  }
  BlockReduce(s, partials, [](const ValueSummary& b, ValueSummary* a) {
    a->sum += b.sum;
    a->nonfinite += b.nonfinite;
  });
}

}  // namespace

int CheckBlocks(int64_t n) {
  const int64_t per_block = kThreads * kPerThread;
  const int64_t blocks = (n + per_block - 1) / per_block;
  return static_cast<int>(
      blocks < 1 ? 1 : (blocks > kMaxCheckBlocks ? kMaxCheckBlocks : blocks));
}

cudaError_t LaunchOutputErrors(const void* out, int dtype, double constant,
                               const double* ref, int64_t n, double atol,
                               double rtol, OutputErrors* partials,
                               cudaStream_t stream) {
  OutputErrorsKernel<<<CheckBlocks(n), kThreads, 0, stream>>>(
      out, dtype, constant, ref, n, atol, rtol, partials);
  return cudaGetLastError();
}

cudaError_t LaunchRunDiff(const void* first, const void* second, int dtype,
                          int64_t n, double atol, double rtol,
                          RunDiff* partials, cudaStream_t stream) {
  RunDiffKernel<<<CheckBlocks(n), kThreads, 0, stream>>>(
      first, second, dtype, n, atol, rtol, partials);
  return cudaGetLastError();
}

cudaError_t LaunchKeyedChecksum(const void* data, int64_t bytes, uint64_t key,
                                uint64_t* partials, cudaStream_t stream) {
  KeyedChecksumKernel<<<CheckBlocks((bytes + 3) / 4), kThreads, 0, stream>>>(
      static_cast<const uint8_t*>(data), bytes, key, partials);
  return cudaGetLastError();
}

cudaError_t LaunchValueSummary(const double* values, int64_t n,
                               ValueSummary* partials, cudaStream_t stream) {
  ValueSummaryKernel<<<CheckBlocks(n), kThreads, 0, stream>>>(values, n,
                                                              partials);
  return cudaGetLastError();
}

}  // namespace kbench
