// Small helpers the references share: cuBLAS statuses as absl::Status, the
// CUDA data type of a problem dtype, and the count of kernels (and
// memsets) one run of an eager pipeline launches.
//
// Thread safety: pure functions; CountLaunches captures on the context's
// stream (runner thread).
#ifndef KBENCH_RUNNER_REFERENCE_LT_UTIL_H_
#define KBENCH_RUNNER_REFERENCE_LT_UTIL_H_

#include <cublasLt.h>
#include <library_types.h>

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kbench/v1/problem.pb.h"
#include "runner/device/device_context.h"

namespace kbench {

// OK, or Internal naming the cuBLAS status and `what` was being done.
absl::Status LtCheck(cublasStatus_t s, const char* what);

// CUDA_R_32F, CUDA_R_16BF or CUDA_R_16F; Unimplemented for other dtypes.
absl::StatusOr<cudaDataType_t> CudaType(v1::DType dtype);

// cuBLASLt's first heuristic choice for the matmul `op` over the layouts
// (D in place of C), within the context's cuBLASLt workspace; Internal
// when it finds none.
absl::StatusOr<cublasLtMatmulAlgo_t> ChooseAlgo(DeviceContext* ctx,
                                                cublasLtMatmulDesc_t op,
                                                cublasLtMatrixLayout_t a,
                                                cublasLtMatrixLayout_t b,
                                                cublasLtMatrixLayout_t d);

// The kernel and memset nodes of a CUDA graph captured from `run` (zeros
// when it cannot be captured; the capture's error is cleared). Kept apart:
// CUPTI's kernel records, which split runs and size counter images, hold
// kernels only, while the launch count a report gives holds both.
struct LaunchCount {
  int kernels = 0;
  int memsets = 0;
};
LaunchCount CountLaunches(DeviceContext* ctx,
                          const std::function<absl::Status()>& run);

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_LT_UTIL_H_
