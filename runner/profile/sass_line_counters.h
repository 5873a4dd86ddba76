// SassLineCounters: global-load coalescing per CUDA source line, from the
// CUPTI SASS metrics API (cupti_sass_metrics.h). One run of the candidate
// with its instructions patched counts, per SASS instruction, the warp-level
// global loads executed (requests) and the sectors they touched; the
// instructions are mapped to source lines through the cubin's -lineinfo
// and summed per line. This is what ncu's source view shows as "L2
// Theoretical Sectors Global" against "Instructions Executed".
//
// One collection, of one kernel launch, per process: measured on the H200
// (CUDA 13.0, driver 580), a second cuptiSassMetricsSetConfig in a process
// fails with CUPTI_ERROR_OUT_OF_MEMORY even after
// cuptiSassMetricsUnsetConfig; with the configuration kept, a second
// enable patches no instruction; and a kernel is patched only as the first
// launch since its module was loaded. So a second Collect is refused;
// line_loads.h runs each in a child process, one per kernel of the plan.
//
// Ownership: borrows the DeviceContext, which must outlive it. Thread
// safety: none (runner thread). Never in a context that runs the range
// profiler or PC sampling (see line_loads.h).
#ifndef KBENCH_RUNNER_PROFILE_SASS_LINE_COUNTERS_H_
#define KBENCH_RUNNER_PROFILE_SASS_LINE_COUNTERS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "runner/device/device_context.h"
#include "runner/profile/pc_sampler.h"

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
  ~SassLineCounters();  // Unsets the configuration, if set.
  SassLineCounters(const SassLineCounters&) = delete;
  SassLineCounters& operator=(const SassLineCounters&) = delete;

  // Runs the one kernel launch that `load` gives (a fresh copy of its
  // module, loaded by `load`) with SASS metrics on, and sums its global
  // loads per line of `cubin` (the image `load` loads).
  // Unavailable, naming the cause, when the GPU, the driver or CUPTI does
  // not offer the metrics; FailedPrecondition on a second call.
  absl::StatusOr<Result> Collect(const std::string& cubin,
                                 const PcSampler::Loader& load);

 private:
  // Initializes the profiler and sets the two metrics' configuration.
  absl::Status Configure();

  DeviceContext* ctx_;
  bool configured_ = false;
  bool collected_ = false;  // Collect ran (see the class comment).
  uint32_t device_ = 0;
  std::map<uint64_t, int> which_;  // Metric id -> 0 (requests), 1 (sectors).
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_PROFILE_SASS_LINE_COUNTERS_H_
