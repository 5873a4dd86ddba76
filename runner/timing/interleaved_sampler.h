// InterleavedSampler: times several workloads (the candidate's plan and the
// reference pipeline) the same way, interleaved in one process so drift
// cancels: per sample an optional L2 flush, a start event, the workload, a
// stop event. Samples are queued in batches behind a StreamBlocker, so
// they run back to back on the GPU; the order of workloads alternates
// between samples. Sampling stops when every workload's StoppingCriterion
// is met.
//
// Ownership: borrows the context, the flusher and the blocker, which must
// outlive it. Thread safety: none.
#ifndef KBENCH_RUNNER_TIMING_INTERLEAVED_SAMPLER_H_
#define KBENCH_RUNNER_TIMING_INTERLEAVED_SAMPLER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runner/device/device_context.h"
#include "runner/device/l2_flusher.h"
#include "runner/device/stream_blocker.h"
#include "runner/host/stopping_criterion.h"

namespace kbench {

class InterleavedSampler {
 public:
  struct Options {
    // Flush L2 before every sample ("cold"); false times a warm cache.
    bool flush_l2 = true;
    // Samples of each workload queued behind one blocker.
    int batch = 8;
    // Untimed runs of each workload first.
    int warmup = 3;
    // When to stop; max_time_ms bounds the whole sampling.
    StoppingCriterion::Options stop;
  };

  struct Workload {
    std::string name;
    // Enqueues one run on the context's stream (no sync).
    std::function<absl::Status()> enqueue;
  };

  struct Result {
    std::vector<std::vector<double>> samples_us;  // One vector per workload.
    std::string stop_reason;
    double wall_ms = 0;
    int discarded_batches = 0;  // Batches whose blocker timed out.
    // The workload index of every run enqueued, in the order they ran
    // (warm-up runs, then timed ones, discarded batches included): how
    // kernel records are told apart (ScheduledSpansUs).
    std::vector<int> order;
    int warmup_runs = 0;  // Warm-up runs of each workload, first in order.
  };

  InterleavedSampler(DeviceContext* ctx, L2Flusher* flusher,
                     StreamBlocker* blocker, const Options& options)
      : ctx_(ctx), flusher_(flusher), blocker_(blocker), options_(options) {}

  // Errors from a workload (a sticky CUDA error, a refused launch) end the
  // sampling and are returned as they are.
  absl::StatusOr<Result> Run(const std::vector<Workload>& workloads);

 private:
  DeviceContext* ctx_;
  L2Flusher* flusher_;
  StreamBlocker* blocker_;
  Options options_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_TIMING_INTERLEAVED_SAMPLER_H_
