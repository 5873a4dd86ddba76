// The runner's own kernels, built ahead by nvcc: seeded random inputs,
// NaN poisoning, fp64 conversions for the golden result, and the concat
// kernel of the eager reference pipeline. Host-side launchers, callable
// from plain C++.
//
// dtype arguments are kbench.v1.DType values (FP32, BF16, FP16, FP64,
// INT32).
// Thread safety: launches onto the given stream; no shared state.
#ifndef KBENCH_RUNNER_DEVICE_HARNESS_KERNELS_H_
#define KBENCH_RUNNER_DEVICE_HARNESS_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kbench {

// dst[i] = uniform in [lo, hi), from a counter-based hash of (seed, i), then
// rounded to the dtype. The same (seed, n) always gives the same values.
cudaError_t LaunchFillUniform(void* dst, int dtype, int64_t n, uint64_t seed,
                              float lo, float hi, cudaStream_t stream);

// dst[i] = s * 10^e with a random sign s and e uniform in
// [log10(min_mag), log10(max_mag)), from a counter-based hash of (seed, i),
// rounded to the dtype: wide dynamic range, mixed signs, never zero.
cudaError_t LaunchFillWideRange(void* dst, int dtype, int64_t n, uint64_t seed,
                                float min_mag, float max_mag,
                                cudaStream_t stream);

// dst[i] = an integer uniform in [lo, hi), from a counter-based hash of
// (seed, i). cudaErrorInvalidValue when hi <= lo.
cudaError_t LaunchFillIntegers(int* dst, int64_t n, uint64_t seed, int64_t lo,
                               int64_t hi, cudaStream_t stream);

// dst[i] = src[i] rounded to the dtype (to nearest; int32: to the nearest
// integer).
cudaError_t LaunchFromDouble(const double* src, void* dst, int dtype, int64_t n,
                             cudaStream_t stream);

// dst[i] = quiet NaN in the dtype.
cudaError_t LaunchFillNaN(void* dst, int dtype, int64_t n, cudaStream_t stream);

// dst[i] = (double)src[i].
cudaError_t LaunchToDouble(const void* src, int dtype, double* dst, int64_t n,
                           cudaStream_t stream);

// Spins one thread until *flag != 0 (host-mapped memory) or `timeout_ns` of
// GPU time passed; on timeout writes 1 to *timed_out. Holds the stream so
// that work queued behind it runs back to back, free of host launch gaps
// (nvbench's blocking kernel).
cudaError_t LaunchBlockStream(const volatile int* flag, int* timed_out,
                              uint64_t timeout_ns, cudaStream_t stream);

// One thread spins for `ns` of GPU time (%globaltimer): a workload of known
// duration, for testing the timers.
cudaError_t LaunchSpinFor(uint64_t ns, cudaStream_t stream);

// FP32 FMA throughput probe: every thread runs `iterations` rounds of 8
// independent FMA chains and writes one value to out[thread] (so nothing is
// optimized away). FLOPs = 2 * 8 * iterations * blocks * threads.
cudaError_t LaunchFmaProbe(float* out, int iterations, int blocks, int threads,
                           cudaStream_t stream);

// SM clock probe: one thread per block spins for `cycles` clock64() cycles
// and block 0 writes out[0] = cycles elapsed and out[1] = %globaltimer ns
// elapsed, so MHz = 1000 * out[0] / out[1]. One block per SM keeps every
// SM busy at once.
cudaError_t LaunchClockProbe(unsigned long long* out, long long cycles,
                             int blocks, cudaStream_t stream);

// Reads every byte of `buf` (`bytes`, a multiple of 16, 16-byte aligned)
// through L2 and writes *sink only if the words fold to `never`: with a
// zeroed buffer and `never` != 0 it writes nothing. Used to leave the L2
// holding clean lines only (L2Flusher).
cudaError_t LaunchReadAll(const void* buf, size_t bytes, unsigned never,
                          unsigned* sink, cudaStream_t stream);

// Rank pointers of an all-gather: shard r of `world` (at most 8) is
// `bytes` at src[r], which may be a peer GPU's memory (peer access
// enabled).
struct GatherShards {
  const void* src[8];
  int world;
  int64_t bytes;
};

// The stand-in for NCCL's all-gather of a baseline that spans GPUs, on the
// calling rank: dst[r * bytes, (r + 1) * bytes) = shard r, for every rank,
// read directly from the peers' memory by SM loads (NCCL's all-gather over
// NVLink is SM copies too). Not a harness kernel: the baseline's time
// includes it. cudaErrorInvalidValue for a world outside 1 to 8.
cudaError_t LaunchGatherShards(const GatherShards& shards, void* dst,
                               cudaStream_t stream);

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_HARNESS_KERNELS_H_
