// PcSampler: where in the source the candidate's warps spend their time.
// CUPTI PC sampling (cupti_pcsampling.h, kernel-serialized, start/stop
// control) samples the warps' program counters and states while the plan
// runs; each sampled PC is mapped to its CUDA source line through the
// cubin's -lineinfo (cuptiGetSassToSourceCorrelation), and the lines are
// ranked by their share of all samples, each with its top warp states.
//
// Ownership: borrows the DeviceContext. Thread safety: none (runner
// thread). PC sampling and the range profiler are never active together:
// PlanCounters runs them one after the other.
#ifndef KBENCH_WORKER_RUNNER_PC_SAMPLER_H_
#define KBENCH_WORKER_RUNNER_PC_SAMPLER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kbench/v1/report.pb.h"
#include "worker/runner/device_context.h"

namespace kbench {

class PcSampler {
 public:
  struct Options {
    // Sampling period: one sample per 2^(5 + period) SM cycles (CUPTI's
    // encoding; 5 to 31).
    uint32_t period = 5;
    // Lines reported, hottest first.
    int max_lines = 8;
    // Distinct PCs the sample buffer holds per flush.
    size_t buffer_pcs = 4096;
    // Device buffer the hardware writes samples to.
    size_t hardware_buffer_bytes = size_t{64} << 20;
    // Host buffer CUPTI keeps parsed records in between flushes.
    size_t scratch_buffer_bytes = size_t{16} << 20;
  };
  struct Result {
    std::vector<v1::SourceLine> lines;
    int64_t samples = 0;
  };

  explicit PcSampler(DeviceContext* ctx, const Options& options)
      : ctx_(ctx), options_(options) {}

  // Samples `enqueue` (the plan's kernels on the context's stream; run
  // `runs` times) and maps the samples to lines of `cubin`, whose source is
  // `source` (file `filename`). Unavailable when PC sampling cannot run
  // here.
  absl::StatusOr<Result> Sample(const std::string& cubin,
                                const std::string& source,
                                const std::string& filename, int runs,
                                const std::function<absl::Status()>& enqueue);

 private:
  DeviceContext* ctx_;
  Options options_;
};

}  // namespace kbench

#endif  // KBENCH_WORKER_RUNNER_PC_SAMPLER_H_
