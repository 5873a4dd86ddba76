// PlanTimer: times the candidate's launch plan against the reference's
// eager pipeline (and the problem's expert baseline, when it has one) at
// one shape, the same way (InterleavedSampler: cold L2, events around each
// whole run, back-to-back on the GPU; GPU time from CUPTI; CUDA-graph
// replay), then checks that
// the timed runs computed the right answer: the output of the last timed
// sample in place, one more run of the same (timed) module on the same
// inputs with the outputs poisoned, and one on fresh inputs (a kernel that
// skips work on later calls fails with "the output of the timed runs was
// wrong"). It measures the SM clock before and after timing (ClockProbe)
// and notes throttling, checks the guard regions, and rejects a median
// below 0.9 x the physical floor as impossible (InvalidArgument). The
// profile of a profile job (PlanProfiler) is not its business: the
// Evaluator runs the profiler after it, on the same bound plan.
//
// Ownership: borrows the context, the L2 flusher and the stream blocker
// (the Evaluator's, shared with the profiler); owns its clock probe.
// Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_TIMING_PLAN_TIMER_H_
#define KBENCH_RUNNER_TIMING_PLAN_TIMER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "contract/expr.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/check/correctness_checker.h"
#include "runner/device/candidate_module.h"
#include "runner/device/clock_probe.h"
#include "runner/device/l2_flusher.h"
#include "runner/device/stream_blocker.h"
#include "runner/device/tensor_set.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class PlanTimer {
 public:
  // One timing: what runs, at which shape.
  struct Params {
    // The job: its problem, timing set and shape, seed, stopping criterion
    // and L2 mode.
    const v1::RunnerJob* job = nullptr;
    // The timing shape's dims.
    const DimValues* dims = nullptr;
    // The timing shape in messages, e.g. "default/orig (R=4 B=12 H=32 K=56)".
    std::string where;
    // The shape's tensors and the plan bound to them (the caller's, which
    // it profiles afterwards). The timer fills the inputs and leaves the
    // last run's outputs.
    TensorSet* tensors = nullptr;
    BoundPlan* bound = nullptr;
    ReferenceOp* reference = nullptr;
    ProgressFn progress;
  };

  // Creates the clock probe; the Evaluator keeps one timer.
  static absl::StatusOr<std::unique_ptr<PlanTimer>> Create(
      DeviceContext* ctx, L2Flusher* flusher, StreamBlocker* blocker);

  // Fills `timing`. When the timed runs' output is wrong, sets
  // `wrong_output` to a one-line reason. Errors as in
  // CorrectnessChecker::Run.
  absl::Status Run(const Params& params, v1::TimingReport* timing,
                   std::string* wrong_output);

 private:
  PlanTimer(DeviceContext* ctx, L2Flusher* flusher, StreamBlocker* blocker)
      : ctx_(ctx), flusher_(flusher), blocker_(blocker) {}
  // The graph basis (GraphReplay) of kernel and reference, alternating;
  // leaves it unset (with a log line) when either cannot be captured.
  absl::Status TimeGraphs(BoundPlan* bound, ReferenceOp* reference, bool cold,
                          v1::TimingReport* timing);

  DeviceContext* ctx_;
  L2Flusher* flusher_;
  StreamBlocker* blocker_;
  std::unique_ptr<ClockProbe> clock_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_TIMING_PLAN_TIMER_H_
