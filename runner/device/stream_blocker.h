// StreamBlocker: holds a stream with a spinning kernel while the host
// queues timed work behind it, then releases it, so the GPU runs the queued
// work back to back and CUDA events measure GPU time, not host launch gaps.
// The kernel gives up after a timeout, so a lost release cannot hang the
// GPU; a batch whose blocker timed out must be discarded.
//
// Ownership: owns a host-mapped flag pair. Thread safety: none.
#ifndef KBENCH_RUNNER_DEVICE_STREAM_BLOCKER_H_
#define KBENCH_RUNNER_DEVICE_STREAM_BLOCKER_H_

#include <cuda_runtime_api.h>

#include <memory>

#include "absl/status/statusor.h"

namespace kbench {

class StreamBlocker {
 public:
  // `timeout_ms`: longest the kernel spins before giving up.
  static absl::StatusOr<std::unique_ptr<StreamBlocker>> Create(
      double timeout_ms = 2000);
  ~StreamBlocker();

  // Enqueues the spinning kernel on `stream` (nothing under a CUDA tool
  // such as Nsight Compute, which serialises and replays launches itself).
  absl::Status Block(cudaStream_t stream);
  // Lets the spinning kernel return.
  void Release();
  // After the stream synchronized: whether the last Block timed out.
  bool TimedOut() const;

 private:
  StreamBlocker() = default;
  int* host_ = nullptr;  // [0] = release flag, [1] = timed-out flag.
  int* device_ = nullptr;
  double timeout_ms_ = 0;
  // A CUDA tool is injected (CUDA_INJECTION64_PATH): Block does nothing.
  bool bypass_ = false;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_STREAM_BLOCKER_H_
