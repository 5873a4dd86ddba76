// Converts CUDA runtime and driver errors into absl::Status.
//
// A sticky error (illegal address, trap, misaligned address, ...) leaves the
// CUDA context unusable: it maps to kAborted, and the runner must be
// replaced. Every other error maps to the code the caller names
// (kInvalidArgument where the kernel's launch plan is at fault, kInternal
// where the harness is).
//
// Thread safety: stateless.
#ifndef KBENCH_RUNNER_DEVICE_CUDA_STATUS_H_
#define KBENCH_RUNNER_DEVICE_CUDA_STATUS_H_

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_result.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runner/device/cuda_driver.h"

namespace kbench {

// True for errors after which the context cannot be used again.
bool IsStickyCudaError(int code);

// "CUDA error cudaErrorIllegalAddress (700): an illegal memory access was
// encountered, while <during>".
absl::Status CudaRtStatus(cudaError_t err, absl::string_view during,
                          absl::StatusCode code = absl::StatusCode::kInternal);
absl::Status CuStatus(const CudaDriver& driver, CUresult result,
                      absl::string_view during,
                      absl::StatusCode code = absl::StatusCode::kInternal);

// CUPTI errors: "<during>: CUPTI_ERROR_...", always kUnavailable (the
// counters, samples or activity records cannot be had here; the caller
// goes on without them). CUPTI_ERROR_INSUFFICIENT_PRIVILEGES says how to
// grant them.
absl::Status CuptiStatus(CUptiResult result, absl::string_view during);

// True when `status` came from a sticky CUDA error.
inline bool IsSticky(const absl::Status& status) {
  return status.code() == absl::StatusCode::kAborted;
}

}  // namespace kbench

// Returns a kInternal status from the enclosing function when a CUDA
// runtime call fails (kAborted when the error is sticky).
#define CUDA_RETURN_IF_ERROR(expr, during)                 \
  do {                                                     \
    const cudaError_t kb_cuda_err_ = (expr);               \
    if (kb_cuda_err_ != cudaSuccess) {                     \
      return ::kbench::CudaRtStatus(kb_cuda_err_, during); \
    }                                                      \
  } while (false)

// Returns the CuptiStatus of a failed CUPTI call from the enclosing
// function.
#define CUPTI_RETURN_IF_ERROR(expr, during)                \
  do {                                                     \
    const CUptiResult kb_cupti_err_ = (expr);              \
    if (kb_cupti_err_ != CUPTI_SUCCESS) {                  \
      return ::kbench::CuptiStatus(kb_cupti_err_, during); \
    }                                                      \
  } while (false)

#endif  // KBENCH_RUNNER_DEVICE_CUDA_STATUS_H_
