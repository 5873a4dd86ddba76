#include "worker/runner/l2_flusher.h"

#include "common/status_macros.h"

namespace kbench {

absl::StatusOr<std::unique_ptr<L2Flusher>> L2Flusher::Create(int64_t l2_bytes) {
  std::unique_ptr<L2Flusher> f(new L2Flusher());
  ASSIGN_OR_RETURN(f->buffer_,
                   DeviceBuffer::Allocate(2 * std::max<int64_t>(l2_bytes, 1)));
  return f;
}

absl::Status L2Flusher::Flush(cudaStream_t stream) {
  // A changing value keeps the writes from being elided by any layer.
  value_ = (value_ + 1) & 0xff;
  CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(buffer_.get(), value_, buffer_.bytes(), stream),
      "flushing the L2 cache");
  return absl::OkStatus();
}

}  // namespace kbench
