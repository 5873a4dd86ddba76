// The runner's checks of large data, on the GPU: the output of a kernel
// against the golden result, a trial's two runs, an input's keyed
// checksum, a golden result's sum. Nothing of the size of a tensor is
// copied to the host: each call reduces on the device into at most
// kMaxCheckBlocks partial results (check_kernels.h), copies those back and
// merges them in block order, so its figures equal the host loop's
// (compare_math.h) in every count, maximum and index, and are the same on
// every run and GPU; fp64 sums differ from the host's in the last bits.
//
// Each call synchronizes `stream`. Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_DEVICE_DEVICE_CHECKS_H_
#define KBENCH_RUNNER_DEVICE_DEVICE_CHECKS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "kbench/v1/problem.pb.h"
#include "runner/device/check_kernels.h"
#include "runner/host/compare_math.h"

namespace kbench {

// `out` (n elements of `dtype`) against the fp64 `golden`.
absl::StatusOr<OutputErrors> DeviceOutputErrors(const void* out, int dtype,
                                                const double* golden, int64_t n,
                                                const v1::Tolerance& tolerance,
                                                cudaStream_t stream);

// The constant output `c` against `golden` (the tolerance's sanity check).
absl::StatusOr<OutputErrors> DeviceConstantErrors(
    double c, const double* golden, int64_t n, const v1::Tolerance& tolerance,
    cudaStream_t stream);

// A trial's first run against its second (both n elements of `dtype`).
absl::StatusOr<RunDiff> DeviceRunDiff(const void* first, const void* second,
                                      int dtype, int64_t n,
                                      const v1::Tolerance& tolerance,
                                      cudaStream_t stream);

// KeyedChecksum (run_checks.h) of `bytes` bytes at `data`.
absl::StatusOr<uint64_t> DeviceKeyedChecksum(const void* data, size_t bytes,
                                             uint64_t key, cudaStream_t stream);

// The sum and the non-finite count of `n` fp64 values.
absl::StatusOr<ValueSummary> DeviceValueSummary(const double* values, int64_t n,
                                                cudaStream_t stream);

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_DEVICE_CHECKS_H_
