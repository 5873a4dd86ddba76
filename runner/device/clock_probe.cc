#include "runner/device/clock_probe.h"

#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/device/harness_kernels.h"

namespace kbench {

absl::StatusOr<std::unique_ptr<ClockProbe>> ClockProbe::Create(
    DeviceContext* ctx) {
  std::unique_ptr<ClockProbe> p(new ClockProbe(ctx));
  ASSIGN_OR_RETURN(p->out_,
                   DeviceBuffer::Allocate(2 * sizeof(unsigned long long)));
  return p;
}

absl::StatusOr<double> ClockProbe::MeasureMhz() {
  cudaStream_t s = ctx_->stream();
  const int max_mhz =
      ctx_->spec().sm_clock_mhz() > 0 ? ctx_->spec().sm_clock_mhz() : 2000;
  // About 0.5 ms at the maximum clock: long against the timer's tick.
  const long long cycles = 500LL * max_mhz;
  const int blocks = ctx_->spec().sm_count() > 0 ? ctx_->spec().sm_count() : 1;
  unsigned long long host[2] = {0, 0};
  // Twice: the first run lets an idle GPU ramp its clock up.
  for (int i = 0; i < 2; ++i) {
    CUDA_RETURN_IF_ERROR(
        LaunchClockProbe(out_.as<unsigned long long>(), cycles, blocks, s),
        "running the clock probe");
  }
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host, out_.get(), sizeof(host),
                                       cudaMemcpyDeviceToHost, s),
                       "reading the clock probe");
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "running the clock probe");
  if (host[1] == 0) return 0.0;
  return 1000.0 * static_cast<double>(host[0]) / static_cast<double>(host[1]);
}

}  // namespace kbench
