// EventTimer: a pool of CUDA event pairs; each slot measures the GPU time
// between a Start and a Stop recorded on a stream. Created `in_graphs`, its
// records are external (cudaEventRecordExternal): recorded while a stream
// is being captured, each becomes an event-record node of the graph, so
// that one replay times every run inside it (GraphReplay).
//
// Ownership: owns its events. Thread safety: none.
#ifndef KBENCH_RUNNER_DEVICE_EVENT_TIMER_H_
#define KBENCH_RUNNER_DEVICE_EVENT_TIMER_H_

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "absl/status/statusor.h"

namespace kbench {

class EventTimer {
 public:
  static absl::StatusOr<std::unique_ptr<EventTimer>> Create(
      int slots, bool in_graphs = false);
  ~EventTimer();

  absl::Status Start(int slot, cudaStream_t stream);
  absl::Status Stop(int slot, cudaStream_t stream);
  // Microseconds between Start and Stop of `slot`; call after both events
  // completed (e.g. after synchronizing the stream).
  absl::StatusOr<double> ElapsedUs(int slot) const;
  int slots() const { return static_cast<int>(start_.size()); }

 private:
  EventTimer() = default;
  absl::Status Record(cudaEvent_t event, cudaStream_t stream, const char* what);
  unsigned record_flags_ = 0;  // cudaEventRecordDefault or ...External.
  std::vector<cudaEvent_t> start_, stop_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_EVENT_TIMER_H_
