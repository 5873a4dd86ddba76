// PlanProfiler: the profile of a profile job, at its timing shape, after
// the PlanTimer has timed it: it times each launch of the plan on its own
// (events between the launches, cold L2, behind the stream blocker) and
// adds the static facts of each kernel (registers, shared memory,
// occupancy, waves) and the plan's achieved TFLOP/s and GB/s; then it
// reads the hardware counters of the plan and of the reference, and with
// the full preset the hot source lines (PlanCounters).
//
// Ownership: borrows the context, the L2 flusher and the stream blocker
// (the Evaluator's, shared with the timer); owns the PlanCounters (and so
// the line-loads child, whose start-up WaitQuiet waits out).
// Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_PROFILE_PLAN_PROFILER_H_
#define KBENCH_RUNNER_PROFILE_PLAN_PROFILER_H_

#include <string>

#include "absl/status/status.h"
#include "contract/expr.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/check/correctness_checker.h"
#include "runner/device/candidate_module.h"
#include "runner/device/device_context.h"
#include "runner/device/l2_flusher.h"
#include "runner/device/stream_blocker.h"
#include "runner/device/tensor_set.h"
#include "runner/profile/plan_counters.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class PlanProfiler {
 public:
  // One profile: what runs, at which shape.
  struct Params {
    // The job: its problem, plan, timing shape and counter preset, and the
    // source and file name the hot lines show.
    const v1::RunnerJob* job = nullptr;
    // The timing shape's dims.
    const DimValues* dims = nullptr;
    // The timing shape in messages, e.g. "default/orig (R=4 B=12 H=32 K=56)".
    std::string where;
    // The image `module` was loaded from (PC samples are mapped to lines
    // through it, and fresh copies loaded from it).
    const std::string* cubin = nullptr;
    CandidateModule* module = nullptr;
    // The shape's tensors and the plan bound to them, as the timer left
    // them.
    const TensorSet* tensors = nullptr;
    BoundPlan* bound = nullptr;
    ReferenceOp* reference = nullptr;
    ProgressFn progress;
    // The problem whose FLOPs and minimum bytes at `dims` the achieved
    // rates count (null: the job's), and the share of them `bound` does:
    // for one rank of a problem that spans R GPUs, the gathered problem
    // and 1/R.
    const v1::Problem* work = nullptr;
    double work_share = 1;
    // For a problem that spans GPUs: the rank `bound` is (its plan runs
    // alone, its peers' inputs in place), of world_size, and its peer()
    // addresses, which the fresh copies of PC sampling bind. The child
    // that counts loads per line does not run then: it would run the plan
    // without its peers. world_size 0: a one-GPU problem.
    int rank = 0;
    int world_size = 0;
    BoundPlan::PeerLookup peers;
  };

  PlanProfiler(DeviceContext* ctx, L2Flusher* flusher, StreamBlocker* blocker);

  // Returns once no helper child is starting up (see line_loads.h): the
  // Evaluator calls it before timing, so that no start-up overlaps the
  // samples or the counters.
  void WaitQuiet();

  // Fills `profile`, with `timing` (the timer's report) copied in. Errors
  // as in CorrectnessChecker::Run; counter trouble is reported in
  // `profile`.
  absl::Status Run(const Params& params, const v1::TimingReport& timing,
                   v1::ProfileReport* profile);

 private:
  // Times each launch and adds its static facts to `profile`.
  absl::Status ProfileLaunches(const Params& params,
                               v1::ProfileReport* profile);

  DeviceContext* ctx_;
  L2Flusher* flusher_;
  StreamBlocker* blocker_;
  PlanCounters counters_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_PROFILE_PLAN_PROFILER_H_
