// ClockProbe: measures the effective SM clock with a calibration kernel
// (clock64() cycles over %globaltimer nanoseconds, one block per SM), so
// the timing report can say the clock during the run and detect throttling.
//
// Ownership: owns a 16-byte device buffer. Thread safety: none (runner
// thread).
#ifndef KBENCH_RUNNER_DEVICE_CLOCK_PROBE_H_
#define KBENCH_RUNNER_DEVICE_CLOCK_PROBE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "runner/device/device_buffer.h"
#include "runner/device/device_context.h"

namespace kbench {

class ClockProbe {
 public:
  static absl::StatusOr<std::unique_ptr<ClockProbe>> Create(DeviceContext* ctx);

  // Runs the probe twice (about 0.5 ms each at the maximum clock) and returns
  // the effective SM clock in MHz. Synchronizes the context's stream.
  absl::StatusOr<double> MeasureMhz();

 private:
  explicit ClockProbe(DeviceContext* ctx) : ctx_(ctx) {}

  DeviceContext* ctx_;
  DeviceBuffer out_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_CLOCK_PROBE_H_
