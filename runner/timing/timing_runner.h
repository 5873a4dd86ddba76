// TimingRunner: times the candidate's launch plan against the reference's
// eager pipeline at one shape, the same way (InterleavedSampler: cold L2,
// events around each whole run, back-to-back on the GPU), then checks that
// the timed runs computed the right answer: the output of the last timed
// sample in place, one more run of the same (timed) module on the same
// inputs with the outputs poisoned, and one on fresh inputs (a kernel that
// skips work on later calls fails with "the output of the timed runs was
// wrong"). It measures the SM clock before and after timing (ClockProbe)
// and notes throttling, checks the guard regions, and rejects a median
// below 0.9 x the physical floor as impossible (InvalidArgument). For profile
// jobs it also times each launch of the plan and adds the static facts of each
// kernel (registers, shared memory, occupancy, waves), then reads the
// hardware counters of the plan and of the reference (PlanCounters).
//
// Ownership: borrows everything; owns the L2 flusher and stream blocker it
// creates. Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_TIMING_TIMING_RUNNER_H_
#define KBENCH_RUNNER_TIMING_TIMING_RUNNER_H_

#include <memory>

#include "absl/status/status.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/check/correctness_checker.h"
#include "runner/device/candidate_module.h"
#include "runner/device/clock_probe.h"
#include "runner/device/l2_flusher.h"
#include "runner/device/stream_blocker.h"
#include "runner/profile/plan_counters.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class TimingRunner {
 public:
  // Creates the flusher (2x L2) and the blocker once; the runner keeps one.
  static absl::StatusOr<std::unique_ptr<TimingRunner>> Create(
      DeviceContext* ctx);

  // Fills `timing` (and `profile` when non-null). `cubin` is the image
  // `module` was loaded from (PC samples are mapped to lines through it).
  // When the timed runs' output is wrong, sets `wrong_output` to a one-line
  // reason. Errors as in CorrectnessChecker::Run.
  absl::Status Run(const v1::RunnerJob& job, const v1::LaunchPlan& plan,
                   const std::string& cubin, CandidateModule* module,
                   ReferenceOp* reference, const ProgressFn& progress,
                   v1::TimingReport* timing, v1::ProfileReport* profile,
                   std::string* wrong_output);

 private:
  explicit TimingRunner(DeviceContext* ctx) : ctx_(ctx) {}
  absl::Status ProfileLaunches(const v1::RunnerJob& job, BoundPlan* bound,
                               CandidateModule* module,
                               v1::ProfileReport* profile);

  DeviceContext* ctx_;
  std::unique_ptr<L2Flusher> flusher_;
  std::unique_ptr<StreamBlocker> blocker_;
  std::unique_ptr<ClockProbe> clock_;
  std::unique_ptr<PlanCounters> counters_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_TIMING_TIMING_RUNNER_H_
