// The runner's checks as GPU reductions (check_kernels.cu): a kernel's
// output against the fp64 golden result, a trial's two runs against each
// other, an input's keyed checksum, and the sum of a golden result. Each
// launch writes one partial result per block into `partials` (CheckBlocks
// of them); the caller merges them in block order (device_checks.h does).
// The element arithmetic is compare_math.h's, the host's own.
//
// dtype arguments are kbench.v1.DType values (FP32, BF16, FP16, FP64,
// INT32). Thread safety: launches onto the given stream; no shared state.
#ifndef KBENCH_RUNNER_DEVICE_CHECK_KERNELS_H_
#define KBENCH_RUNNER_DEVICE_CHECK_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runner/host/compare_math.h"

namespace kbench {

// A golden result's sum and its count of NaN or infinite elements.
struct ValueSummary {
  double sum;
  int64_t nonfinite;
};

// The blocks a check of `n` elements (or words) launches: a function of
// `n` alone, so the grouping of a reduction, and with it the last bits of
// its fp64 sums, is the same on every GPU. At most kMaxCheckBlocks.
inline constexpr int kMaxCheckBlocks = 1024;
int CheckBlocks(int64_t n);

// partials[b] = the OutputErrors of the elements block b visits: `out`
// (in `dtype`) against `ref`, or the constant `constant` against `ref`
// when `out` is null.
cudaError_t LaunchOutputErrors(const void* out, int dtype, double constant,
                               const double* ref, int64_t n, double atol,
                               double rtol, OutputErrors* partials,
                               cudaStream_t stream);

// partials[b] = the RunDiff of `first` and `second` (both in `dtype`).
cudaError_t LaunchRunDiff(const void* first, const void* second, int dtype,
                          int64_t n, double atol, double rtol,
                          RunDiff* partials, cudaStream_t stream);

// partials[b] = the sum of ChecksumWord(key, i, word i) over the 32-bit
// words block b visits of `bytes` bytes at `data` (4-byte aligned).
cudaError_t LaunchKeyedChecksum(const void* data, int64_t bytes, uint64_t key,
                                uint64_t* partials, cudaStream_t stream);

// partials[b] = the ValueSummary of the elements block b visits.
cudaError_t LaunchValueSummary(const double* values, int64_t n,
                               ValueSummary* partials, cudaStream_t stream);

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_CHECK_KERNELS_H_
