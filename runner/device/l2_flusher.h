// L2Flusher: evicts the L2 cache before a timed sample or a counter pass
// ("cold", as nvbench and ncu's cache control do). It reads a zeroed
// buffer twice the L2's size through L2, twice over: every line the L2
// held is evicted (dirty ones written back now, not during the next
// kernel), and the L2 is left holding clean lines of the buffer only. One
// read leaves about 1% of the dirty lines in place (H200: 92 KB of DRAM
// writes in a read-only kernel after a memset of the L2's size, against 0
// after two; tests/gpu/counter_profiler_test.cc). A memset (nvbench's flush)
// would leave the L2 full of dirty lines whose write-back lands inside the
// next kernel: DRAM writes that kernel never made, and a slower first
// access; ncu's flush leaves none.
//
// Ownership: owns the buffer. Thread safety: none.
#ifndef KBENCH_RUNNER_DEVICE_L2_FLUSHER_H_
#define KBENCH_RUNNER_DEVICE_L2_FLUSHER_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "runner/device/device_buffer.h"

namespace kbench {

class L2Flusher {
 public:
  // `l2_bytes`: the GPU's L2 size (GpuSpec.l2_bytes).
  static absl::StatusOr<std::unique_ptr<L2Flusher>> Create(int64_t l2_bytes);
  // Kernels one Flush launches (a profiler drops their ranges).
  static constexpr int kKernels = 2;

  // Enqueues the flush (kKernels read-only kernels over the buffer) on
  // `stream`.
  absl::Status Flush(cudaStream_t stream);
  size_t bytes() const { return buffer_.bytes(); }

 private:
  L2Flusher() = default;
  DeviceBuffer buffer_;  // Zeros.
  DeviceBuffer sink_;    // Never written (see LaunchReadAll).
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_L2_FLUSHER_H_
