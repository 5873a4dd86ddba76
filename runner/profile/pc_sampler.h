// PcSampler: where in the source the candidate's warps spend their time.
// CUPTI PC sampling (cupti_pcsampling.h, continuous mode, start/stop
// control) samples the warps' program counters and states while the plan
// runs; each sampled PC is mapped to its CUDA source line through the
// cubin's -lineinfo (cuptiGetSassToSourceCorrelation), and the lines are
// ranked by their share of all samples, each with its top warp states.
//
// Ownership: borrows the DeviceContext. Thread safety: none (runner
// thread). PC sampling and the range profiler are never active together:
// PlanCounters runs them one after the other.
#ifndef KBENCH_RUNNER_PROFILE_PC_SAMPLER_H_
#define KBENCH_RUNNER_PROFILE_PC_SAMPLER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kbench/v1/report.pb.h"
#include "runner/device/device_context.h"

namespace kbench {

class PcSampler {
 public:
  struct Options {
    // Base sampling period: one sample per 2^(5 + period) SM cycles
    // (CUPTI's encoding; 5 to 31).
    uint32_t period = 5;
    // GPU time sampled at the base period; each doubling of the sampled
    // time (runs x time per run) beyond it adds one to the period, so the
    // sample count (and the hardware buffer it fills) stays bounded. On a
    // full buffer the period grows by 3 and sampling is retried, twice.
    double window_us = 1000;
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

  // Loads a fresh copy of the candidate and binds it to the plan's tensors;
  // returns the function that enqueues one run of it on the context's
  // stream (it keeps that copy alive). Called once PC sampling is enabled:
  // CUPTI attributes samples only to modules loaded after that, and
  // counts the rest as "non-user kernels".
  using Loader = std::function<absl::StatusOr<std::function<absl::Status()>>()>;

  // Samples `runs` runs (about `run_us` each) of the candidate that
  // `load` gives and maps the samples to lines of `cubin` (the image
  // `load` loads), whose source is `source` (file `filename`).
  // Unavailable, with the sample counts, when PC sampling cannot run here
  // or finds no samples in the candidate.
  absl::StatusOr<Result> Sample(const std::string& cubin,
                                const std::string& source,
                                const std::string& filename, int runs,
                                double run_us, const Loader& load);

 private:
  // One attempt at `period`; ResourceExhausted when the hardware buffer
  // filled up.
  absl::StatusOr<Result> SampleAt(uint32_t period, const std::string& cubin,
                                  const std::string& source,
                                  const std::string& filename, int runs,
                                  const Loader& load);

  DeviceContext* ctx_;
  Options options_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_PROFILE_PC_SAMPLER_H_
