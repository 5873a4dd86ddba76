#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "runner/device/dtype_access.cuh"
#include "runner/device/harness_kernels.h"

namespace kbench {
namespace {

using namespace dtype_access;  // NOLINT(build/namespaces): kFp32.., Load,
                               // Store.

constexpr int kThreads = 256;

__global__ void FillUniformKernel(void* dst, int dtype, int64_t n,
                                  uint64_t seed, float lo, float hi) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t r = SplitMix64(seed ^ SplitMix64(uint64_t(i)));
    const double u = double(r >> 11) * (1.0 / 9007199254740992.0);  // [0,1)
    Store(dst, dtype, i, lo + (double(hi) - lo) * u);
  }
}

__global__ void FillWideRangeKernel(void* dst, int dtype, int64_t n,
                                    uint64_t seed, double log_lo,
                                    double log_span) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t r = SplitMix64(seed ^ SplitMix64(uint64_t(i)));
    const double u = double(r >> 11) * (1.0 / 9007199254740992.0);  // [0,1)
    const double mag = exp10(log_lo + log_span * u);
    Store(dst, dtype, i, (r & 1) ? -mag : mag);
  }
}

__global__ void FillIntegersKernel(int* dst, int64_t n, uint64_t seed,
                                   int64_t lo, uint64_t span) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t r = SplitMix64(seed ^ SplitMix64(uint64_t(i)));
    dst[i] = static_cast<int>(lo + static_cast<int64_t>(r % span));
  }
}

__global__ void FromDoubleKernel(const double* src, void* dst, int dtype,
                                 int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    Store(dst, dtype, i, src[i]);
  }
}

__global__ void ClockProbeKernel(unsigned long long* out, long long cycles) {
  if (threadIdx.x != 0) return;
  uint64_t t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  long long c1 = c0;
  while (c1 - c0 < cycles) c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (blockIdx.x == 0) {
    out[0] = static_cast<unsigned long long>(c1 - c0);
    out[1] = t1 - t0;
  }
}

__global__ void FillNaNKernel(void* dst, int dtype, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    Store(dst, dtype, i, __longlong_as_double(0x7ff8000000000000ll));
  }
}

__global__ void ToDoubleKernel(const void* src, int dtype, double* dst,
                               int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    dst[i] = Load(src, dtype, i);
  }
}

__global__ void BlockStreamKernel(const volatile int* flag, int* timed_out,
                                  uint64_t timeout_ns) {
  uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (*flag == 0) {
    uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) {
      *timed_out = 1;
      break;
    }
    __nanosleep(100);
  }
}

__global__ void SpinForKernel(uint64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

__global__ void FmaProbeKernel(float* out, int iterations) {
  const float a = 1.0f + 1e-7f * threadIdx.x, b = 1e-7f;
  float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
  float x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
  for (int i = 0; i < iterations; ++i) {
    x0 = fmaf(x0, a, b);
    x1 = fmaf(x1, a, b);
    x2 = fmaf(x2, a, b);
    x3 = fmaf(x3, a, b);
    x4 = fmaf(x4, a, b);
    x5 = fmaf(x5, a, b);
    x6 = fmaf(x6, a, b);
    x7 = fmaf(x7, a, b);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] =
      x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

unsigned int Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(
      blocks < 65535 * 8 ? (blocks > 0 ? blocks : 1) : 65535 * 8);
}

// Reads every 16-byte word of `buf` (grid-stride, coalesced) and folds
// them into one value, stored only if it equals `never` (the buffer is
// zeros and `never` is not zero), so the loads cannot be elided and
// nothing is written.
__global__ void ReadAllKernel(const uint4* buf, int64_t n, unsigned never,
                              unsigned* sink) {
  unsigned acc = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(buf + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == never) *sink = acc;
}

// Copies every shard into dst, 16 bytes at a time where the shards allow
// it, else bytewise. Its name must not match IsHarnessKernel's list: the
// baseline's run counts it.
__global__ void AllGatherPeerReadKernel(GatherShards shards, uint8_t* dst,
                                        bool wide) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (int r = 0; r < shards.world; ++r) {
    uint8_t* out = dst + r * shards.bytes;
    if (wide) {
      const uint4* in = static_cast<const uint4*>(shards.src[r]);
      const int64_t n = shards.bytes / int64_t(sizeof(uint4));
      for (int64_t i = first; i < n; i += stride) {
        reinterpret_cast<uint4*>(out)[i] = in[i];
      }
    } else {
      const uint8_t* in = static_cast<const uint8_t*>(shards.src[r]);
      for (int64_t i = first; i < shards.bytes; i += stride) out[i] = in[i];
    }
  }
}

}  // namespace

cudaError_t LaunchGatherShards(const GatherShards& shards, void* dst,
                               cudaStream_t stream) {
  if (shards.world < 1 || shards.world > 8 || shards.bytes < 0) {
    return cudaErrorInvalidValue;
  }
  bool wide =
      shards.bytes % 16 == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0;
  for (int r = 0; r < shards.world; ++r) {
    wide = wide && reinterpret_cast<uintptr_t>(shards.src[r]) % 16 == 0;
  }
  const int64_t units = wide ? shards.bytes / 16 : shards.bytes;
  const int64_t blocks = std::min<int64_t>(
      std::max<int64_t>((units + kThreads - 1) / kThreads, 1), 1024);
  AllGatherPeerReadKernel<<<static_cast<unsigned int>(blocks), kThreads, 0,
                            stream>>>(shards, static_cast<uint8_t*>(dst), wide);
  return cudaGetLastError();
}

cudaError_t LaunchBlockStream(const volatile int* flag, int* timed_out,
                              uint64_t timeout_ns, cudaStream_t stream) {
  BlockStreamKernel<<<1, 1, 0, stream>>>(flag, timed_out, timeout_ns);
  return cudaGetLastError();
}

cudaError_t LaunchFmaProbe(float* out, int iterations, int blocks, int threads,
                           cudaStream_t stream) {
  FmaProbeKernel<<<blocks, threads, 0, stream>>>(out, iterations);
  return cudaGetLastError();
}

cudaError_t LaunchSpinFor(uint64_t ns, cudaStream_t stream) {
  SpinForKernel<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}

cudaError_t LaunchFillUniform(void* dst, int dtype, int64_t n, uint64_t seed,
                              float lo, float hi, cudaStream_t stream) {
  FillUniformKernel<<<Blocks(n), kThreads, 0, stream>>>(dst, dtype, n, seed, lo,
                                                        hi);
  return cudaGetLastError();
}

cudaError_t LaunchFillWideRange(void* dst, int dtype, int64_t n, uint64_t seed,
                                float min_mag, float max_mag,
                                cudaStream_t stream) {
  const double lo = log10(double(min_mag)), hi = log10(double(max_mag));
  FillWideRangeKernel<<<Blocks(n), kThreads, 0, stream>>>(dst, dtype, n, seed,
                                                          lo, hi - lo);
  return cudaGetLastError();
}

cudaError_t LaunchFillIntegers(int* dst, int64_t n, uint64_t seed, int64_t lo,
                               int64_t hi, cudaStream_t stream) {
  if (hi <= lo) return cudaErrorInvalidValue;
  FillIntegersKernel<<<Blocks(n), kThreads, 0, stream>>>(
      dst, n, seed, lo, static_cast<uint64_t>(hi - lo));
  return cudaGetLastError();
}

cudaError_t LaunchFromDouble(const double* src, void* dst, int dtype, int64_t n,
                             cudaStream_t stream) {
  FromDoubleKernel<<<Blocks(n), kThreads, 0, stream>>>(src, dst, dtype, n);
  return cudaGetLastError();
}

cudaError_t LaunchClockProbe(unsigned long long* out, long long cycles,
                             int blocks, cudaStream_t stream) {
  const unsigned int grid = blocks > 0 ? static_cast<unsigned int>(blocks) : 1;
  ClockProbeKernel<<<grid, 32, 0, stream>>>(out, cycles);
  return cudaGetLastError();
}

cudaError_t LaunchFillNaN(void* dst, int dtype, int64_t n,
                          cudaStream_t stream) {
  FillNaNKernel<<<Blocks(n), kThreads, 0, stream>>>(dst, dtype, n);
  return cudaGetLastError();
}

cudaError_t LaunchToDouble(const void* src, int dtype, double* dst, int64_t n,
                           cudaStream_t stream) {
  ToDoubleKernel<<<Blocks(n), kThreads, 0, stream>>>(src, dtype, dst, n);
  return cudaGetLastError();
}

cudaError_t LaunchReadAll(const void* buf, size_t bytes, unsigned never,
                          unsigned* sink, cudaStream_t stream) {
  const int64_t n = static_cast<int64_t>(bytes / sizeof(uint4));
  ReadAllKernel<<<1024, kThreads, 0, stream>>>(static_cast<const uint4*>(buf),
                                               n, never, sink);
  return cudaGetLastError();
}

}  // namespace kbench
