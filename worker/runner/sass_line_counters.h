// SassLineCounters: global-load coalescing per CUDA source line, from the
// CUPTI SASS metrics API (cupti_sass_metrics.h). One run of the candidate
// with its instructions patched counts, per SASS instruction, the warp-level
// global loads executed (requests) and the sectors they touched; the
// instructions are mapped to source lines through the cubin's -lineinfo
// and summed per line. This is what ncu's source view shows as "L2
// Theoretical Sectors Global" against "Instructions Executed".
//
// Ownership: borrows the DeviceContext. Thread safety: none (runner
// thread). Never active together with the range profiler or PC sampling:
// PlanCounters runs them one after the other.
#ifndef KBENCH_WORKER_RUNNER_SASS_LINE_COUNTERS_H_
#define KBENCH_WORKER_RUNNER_SASS_LINE_COUNTERS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "worker/runner/device_context.h"
#include "worker/runner/pc_sampler.h"

namespace kbench {

class SassLineCounters {
 public:
  // Global loads at one source line.
  struct LineLoads {
    int64_t requests = 0;  // Warp-level global load instructions executed.
    int64_t sectors = 0;   // 32-byte sectors those loads touched.
  };
  // (file, line) -> its loads; lines without global loads are absent.
  using Result = std::map<std::pair<std::string, int>, LineLoads>;

  explicit SassLineCounters(DeviceContext* ctx) : ctx_(ctx) {}

  // Runs the candidate that `load` gives once with SASS metrics on and
  // sums its global loads per line of `cubin` (the image `load` loads).
  // Unavailable, naming the cause, when the GPU, the driver or CUPTI does
  // not offer the metrics.
  absl::StatusOr<Result> Collect(const std::string& cubin,
                                 const PcSampler::Loader& load);

 private:
  DeviceContext* ctx_;
};

}  // namespace kbench

#endif  // KBENCH_WORKER_RUNNER_SASS_LINE_COUNTERS_H_
