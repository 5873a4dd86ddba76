// L2Flusher: evicts the L2 cache before a timed sample ("cold" timing, as
// nvbench does) by writing a buffer twice the L2's size.
//
// Ownership: owns the buffer. Thread safety: none.
#ifndef KBENCH_WORKER_RUNNER_L2_FLUSHER_H_
#define KBENCH_WORKER_RUNNER_L2_FLUSHER_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "worker/runner/device_buffer.h"

namespace kbench {

class L2Flusher {
 public:
  // `l2_bytes`: the GPU's L2 size (GpuSpec.l2_bytes).
  static absl::StatusOr<std::unique_ptr<L2Flusher>> Create(int64_t l2_bytes);
  // Enqueues the flush (a memset of the buffer) on `stream`.
  absl::Status Flush(cudaStream_t stream);
  size_t bytes() const { return buffer_.bytes(); }

 private:
  L2Flusher() = default;
  DeviceBuffer buffer_;
  int value_ = 0;
};

}  // namespace kbench

#endif  // KBENCH_WORKER_RUNNER_L2_FLUSHER_H_
