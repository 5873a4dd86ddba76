#include "runner/device/l2_flusher.h"

#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/device/harness_kernels.h"

namespace kbench {

absl::StatusOr<std::unique_ptr<L2Flusher>> L2Flusher::Create(int64_t l2_bytes) {
  std::unique_ptr<L2Flusher> f(new L2Flusher());
  // Twice the L2, rounded up to 16-byte words.
  const int64_t bytes = (2 * std::max<int64_t>(l2_bytes, 1) + 15) / 16 * 16;
  ASSIGN_OR_RETURN(f->buffer_, DeviceBuffer::Allocate(bytes));
  ASSIGN_OR_RETURN(f->sink_, DeviceBuffer::Allocate(16));
  CUDA_RETURN_IF_ERROR(cudaMemset(f->buffer_.get(), 0, f->buffer_.bytes()),
                       "zeroing the L2 flush buffer");
  CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize(), "zeroing the L2 flush buffer");
  return f;
}

absl::Status L2Flusher::Flush(cudaStream_t stream) {
  for (int i = 0; i < kKernels; ++i) {
    CUDA_RETURN_IF_ERROR(
        LaunchReadAll(buffer_.get(), buffer_.bytes(), /*never=*/1,
                      static_cast<unsigned*>(sink_.get()), stream),
        "flushing the L2 cache");
  }
  return absl::OkStatus();
}

}  // namespace kbench
