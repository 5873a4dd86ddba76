#include "runner/device/stream_blocker.h"

#include <atomic>
#include <cstdlib>

#include "runner/device/cuda_status.h"
#include "runner/device/harness_kernels.h"

namespace kbench {

absl::StatusOr<std::unique_ptr<StreamBlocker>> StreamBlocker::Create(
    double timeout_ms, bool tool_attached) {
  std::unique_ptr<StreamBlocker> b(new StreamBlocker());
  b->timeout_ms_ = timeout_ms;
  CUDA_RETURN_IF_ERROR(cudaHostAlloc(reinterpret_cast<void**>(&b->host_),
                                     2 * sizeof(int), cudaHostAllocMapped),
                       "allocating the stream blocker's flag");
  CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(
                           reinterpret_cast<void**>(&b->device_), b->host_, 0),
                       "mapping the stream blocker's flag");
  b->host_[0] = b->host_[1] = 0;
  // Under a CUDA tool (Nsight Compute, compute-sanitizer) launches are
  // serialised and replayed by the tool: a kernel spinning on a host flag
  // would stall it, so the stream is not blocked there.
  b->bypass_ = tool_attached || std::getenv("CUDA_INJECTION64_PATH") != nullptr;
  return b;
}

StreamBlocker::~StreamBlocker() {
  if (host_ != nullptr) {
    host_[0] = 1;
    cudaFreeHost(host_);
  }
}

absl::Status StreamBlocker::Block(cudaStream_t stream) {
  reinterpret_cast<volatile int*>(host_)[0] = 0;
  reinterpret_cast<volatile int*>(host_)[1] = 0;
  if (bypass_) return absl::OkStatus();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  CUDA_RETURN_IF_ERROR(
      LaunchBlockStream(device_, device_ + 1,
                        static_cast<uint64_t>(timeout_ms_ * 1e6), stream),
      "blocking the stream for timing");
  return absl::OkStatus();
}

void StreamBlocker::Release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  reinterpret_cast<volatile int*>(host_)[0] = 1;
}

bool StreamBlocker::TimedOut() const {
  return reinterpret_cast<volatile int*>(host_)[1] != 0;
}

}  // namespace kbench
