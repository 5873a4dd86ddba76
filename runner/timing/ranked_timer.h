// RankedTimer: times a kernel for a problem that spans GPUs against the
// problem's baseline (docs/multi-gpu.md), every rank at once, from a
// common start to the last rank's finish.
//
// Each sample, on every rank: the L2 flush (cold) and, for the kernel, its
// workspace memsets; then a barrier (every rank's stream waits for an
// event every rank recorded), so that the ranks start together; then the
// workload's launches between a start and a stop event. Samples are queued
// in batches behind every rank's StreamBlocker and released together, and
// the kernel and the baseline alternate, as the one-GPU InterleavedSampler
// does.
//
// A sample's time: from CUPTI's kernel records, from the first rank's
// first kernel to the last rank's last kernel (CUPTI puts every GPU on one
// time base; kernel_gpu / reference_gpu, and the speedup's basis); from
// events, the slowest rank's span (events of two GPUs cannot be compared),
// which also drives the stopping criterion. Under a profiler only the
// events are there. Each rank's own spans, on both bases, are reported
// too (TimingReport.ranks), to show which rank is slow.
//
// After timing, the last timed run's output is judged on every rank, then
// one more run on fresh inputs with the outputs poisoned: a kernel that
// skips work on later calls fails with "the output of the timed runs was
// wrong". Not built yet, as the one-GPU PlanTimer has them: CUDA-graph
// replay, the SM clock probe, the expert baseline.
//
// Ownership: borrows the rank group; owns an L2 flusher, a stream blocker
// and a barrier event per rank. Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_TIMING_RANKED_TIMER_H_
#define KBENCH_RUNNER_TIMING_RANKED_TIMER_H_

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/check/correctness_checker.h"
#include "runner/check/ranked_runs.h"
#include "runner/device/event_timer.h"
#include "runner/device/l2_flusher.h"
#include "runner/device/rank_group.h"
#include "runner/device/stream_blocker.h"
#include "runner/reference/baseline_pipeline.h"
#include "runner/reference/collective.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class RankedTimer {
 public:
  // One timing: what runs, at which shape.
  struct Params {
    // The job: its timing set and shape, seed, stopping criterion and L2
    // mode.
    const v1::RunnerJob* job = nullptr;
    // The timing shape in messages.
    std::string where;
    // The timing shape's buffers on every rank; the timer draws the
    // inputs and leaves the last run's outputs.
    RankedRuns* runs = nullptr;
    // The baseline's pipeline on every rank, by rank, not yet prepared,
    // and the collective their all-gather steps share.
    std::vector<BaselinePipeline*> baselines;
    Collective* collective = nullptr;
    // Computes the golden of the gathered inputs (on rank 0).
    ReferenceOp* golden = nullptr;
    // The problem's FLOPs and minimum bytes at the timing shape, all
    // ranks together (the gathered problem's).
    double flops = 0;
    double min_bytes = 0;
    bool half_precision = false;
    ProgressFn progress;
  };

  // `tool_attached`: a CUDA tool holds CUPTI (KernelActivity::ToolAttached).
  static absl::StatusOr<std::unique_ptr<RankedTimer>> Create(
      RankGroup* ranks, bool tool_attached);
  ~RankedTimer();

  RankedTimer(const RankedTimer&) = delete;
  RankedTimer& operator=(const RankedTimer&) = delete;

  // Fills `timing`. When the timed runs' output is wrong, sets
  // `wrong_output` to a one-line reason. Errors as RankedChecker's.
  absl::Status Run(const Params& params, v1::TimingReport* timing,
                   std::string* wrong_output);

 private:
  explicit RankedTimer(RankGroup* ranks) : ranks_(ranks) {}
  // Enqueues one run of workload `w` (0: the kernel, 1: the baseline) on
  // every rank from a common start, with start and stop events in `slot`
  // of every rank's timer when `timers` is given.
  absl::Status EnqueueRun(
      const Params& params, int w, bool flush,
      const std::vector<std::unique_ptr<EventTimer>>* timers, int slot);
  // Judges the outputs every rank holds; sets *wrong to `which`'s failure.
  absl::Status JudgeTimed(const Params& params, const char* which,
                          std::string* wrong);

  RankGroup* ranks_;
  std::vector<std::unique_ptr<L2Flusher>> flushers_;      // By rank.
  std::vector<std::unique_ptr<StreamBlocker>> blockers_;  // By rank.
  std::vector<cudaEvent_t> ready_;                        // By rank.
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_TIMING_RANKED_TIMER_H_
