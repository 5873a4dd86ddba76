// DeviceContext: the runner's hold on one GPU: the primary CUDA context,
// one non-blocking stream, cuBLAS and cuBLASLt handles with a workspace, and
// the GPU's facts as a GpuSpec.
//
// Ownership: owns the stream, the handles and the workspace; releases them
// in the destructor. The runner has exactly one.
// Thread safety: none; the runner is single-threaded.
#ifndef KBENCH_RUNNER_DEVICE_DEVICE_CONTEXT_H_
#define KBENCH_RUNNER_DEVICE_DEVICE_CONTEXT_H_

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>

#include "absl/status/statusor.h"
#include "kbench/v1/report.pb.h"
#include "runner/device/cuda_driver.h"
#include "runner/device/device_buffer.h"

namespace kbench {

class DeviceContext {
 public:
  struct Options {
    // CUDA device ordinal among the visible devices.
    int device = 0;
    // cuBLASLt workspace, in bytes (PyTorch uses 32 MiB on Hopper).
    size_t cublaslt_workspace_bytes = 32u << 20;
    // Create the cuBLASLt handle and its workspace (the baselines' matmul
    // steps); false for a child that runs no reference (cublaslt() is null).
    bool blas = true;
  };

  // FailedPrecondition with a plain message when there is no driver or no
  // GPU ("no CUDA device: cudaErrorNoDevice ...").
  static absl::StatusOr<std::unique_ptr<DeviceContext>> Create(
      const Options& options);
  ~DeviceContext();

  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  const CudaDriver& driver() const { return driver_; }
  cudaStream_t stream() const { return stream_; }
  cublasLtHandle_t cublaslt() const { return cublaslt_; }
  void* lt_workspace() const { return lt_workspace_.get(); }
  size_t lt_workspace_bytes() const { return lt_workspace_.bytes(); }
  const v1::GpuSpec& spec() const { return spec_; }
  // The CUDA device ordinal among the visible devices.
  int device() const { return device_; }
  // For adding measured ceilings once at start-up.
  v1::GpuSpec* mutable_spec() { return &spec_; }

 private:
  DeviceContext() = default;
  absl::Status Init(const Options& options);
  absl::Status ReadSpec();

  CudaDriver driver_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t cublaslt_ = nullptr;
  DeviceBuffer lt_workspace_;
  v1::GpuSpec spec_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_DEVICE_CONTEXT_H_
