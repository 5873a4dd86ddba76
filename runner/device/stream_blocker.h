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
  // `tool_attached`: a CUDA tool holds this process (the caller knows it
  // from CUPTI where the tool left CUDA_INJECTION64_PATH unset): Block
  // does nothing, as it does when that variable is set.
  static absl::StatusOr<std::unique_ptr<StreamBlocker>> Create(
      double timeout_ms = 2000, bool tool_attached = false);
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
  // A CUDA tool is attached: Block does nothing. Under ncu every batch's
  // blocker timed out (ncu serialises the launches queued behind it), every
  // batch was discarded, and sampling never ended (H100, 2026-12-05).
  bool bypass_ = false;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_STREAM_BLOCKER_H_
