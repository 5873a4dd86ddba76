// Evaluator: carries out one RunnerJob in the runner process and turns
// every outcome into a JobResult with a verdict:
//   passed      correct on every trial (and, for submit/profile, timed);
//   failed      a wrong result, with the error figures (also: the two runs
//               of a trial differed, the timed runs' output was wrong, a
//               hidden case failed);
//   crashed     a sticky CUDA error (illegal address, trap, ...): the
//               context is unusable and the caller must replace the runner;
//   rejected    the kernel breaks the contract (missing entry, parameters
//               that do not match, a launch the GPU refuses, a write
//               outside a tensor, a modified input, a time below the
//               physical floor);
//   compile_error  only when the runner had to compile for its own arch;
//   error       a fault of the harness itself (a job that carries no
//               launch plan, too), or a problem whose check is too weak:
//               a zero or constant output would pass.
// Every result carries a ReproManifest.
// timed_out is decided by the worker's watchdog, outside this process.
//
// The job's launch plan comes in RunnerJob.plan (checked by JobPlan,
// contract/runner_job.h); it is resolved and checked against the GPU's
// limits once per shape (ShapePlans), for the correctness check and the
// timing alike. The timing (PlanTimer) and, for profile jobs, the profile
// (PlanProfiler) are separate objects that this class runs one after the
// other on the same bound plan.
//
// A job whose problem spans GPUs takes another path (RunRanked): the
// check on every rank, by RankedChecker, with the ranks' contexts made
// per job (RankGroup), the timing on every rank (RankedTimer) and the
// profile of rank 0.
//
// Ownership: borrows the DeviceContext; owns the compiler (for the
// manifest's options), the L2 flusher and the stream blocker, which it
// lends to the timer and the profiler, and those two.
// Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_EVALUATOR_H_
#define KBENCH_RUNNER_EVALUATOR_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/nvrtc_compiler.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/check/correctness_checker.h"
#include "runner/device/device_context.h"
#include "runner/host/shape_plans.h"

namespace kbench {

class L2Flusher;
class PlanProfiler;
class ProblemCheck;
class PlanTimer;
class ParsedPlan;
class RankGroup;
class StreamBlocker;

class Evaluator {
 public:
  static absl::StatusOr<std::unique_ptr<Evaluator>> Create(DeviceContext* ctx);
  ~Evaluator();

  // Runs `job`. Sets *unhealthy when the CUDA context must not be used
  // again.
  v1::JobResult Run(const v1::RunnerJob& job, const ProgressFn& progress,
                    bool* unhealthy);

  // The visible device of each rank of a job whose problem spans GPUs
  // (RankGroup); empty (the default) puts rank r on the runner's device
  // + r, as kbworker's gang leader lists the gang's GPUs. A test on one GPU
  // gives {0, 0}.
  void set_rank_devices(std::vector<int> devices) {
    rank_devices_ = std::move(devices);
  }

 private:
  // Out of line, as the destructor: the members' types are incomplete here.
  explicit Evaluator(DeviceContext* ctx);
  // The cubin for this GPU: the job's when its arch matches, else an error
  // (the runner never compiles).
  absl::StatusOr<std::string> CubinFor(const v1::RunnerJob& job,
                                       v1::JobResult* result);
  absl::Status RunChecked(const v1::RunnerJob& job, const ProgressFn& progress,
                          v1::JobResult* result);
  // A job whose problem spans GPUs (evaluator_ranked.cc): its check on
  // every rank (RankedChecker) and, for a submit or a profile, its timing
  // against the baseline on every rank (TimeRanked); a sanitize job is the
  // check (run under compute-sanitizer by kbworker).
  absl::Status RunRanked(const v1::RunnerJob& job, const std::string& cubin,
                         const ProgressFn& progress, v1::JobResult* result);
  // The timing of a submit or profile of such a problem (RankedTimer) at
  // the job's timing shape, with the candidate loaded afresh on every rank
  // from `cubin`; `gathered_job` is the job with its problem gathered
  // (GatheredProblem), `golden` the golden on rank 0. Sets `wrong` when
  // the timed runs' output was wrong. A profile then adds rank 0's
  // (PlanProfiler on rank 0's plan alone, beside rank 0's baseline).
  absl::Status TimeRanked(const v1::RunnerJob& job,
                          const v1::RunnerJob& gathered_job,
                          const std::string& cubin, const ParsedPlan& parsed,
                          RankGroup* ranks, ShapePlans* plans,
                          ReferenceOp* golden, const ProgressFn& progress,
                          v1::JobResult* result, std::string* wrong);
  // Times `module` (freshly loaded from `cubin`) at the job's timing shape
  // and, for a profile job, profiles it there.
  absl::Status RunTimed(const v1::RunnerJob& job, ShapePlans* plans,
                        const std::string& cubin, CandidateModule* module,
                        ReferenceOp* reference, const ProgressFn& progress,
                        v1::JobResult* result, std::string* wrong_output);

  DeviceContext* ctx_;
  NvrtcCompiler compiler_;
  std::unique_ptr<L2Flusher> flusher_;
  std::unique_ptr<StreamBlocker> blocker_;
  std::unique_ptr<PlanTimer> timer_;
  std::unique_ptr<PlanProfiler> profiler_;
  // A golden-kernel problem's own checks, once per problem.
  std::unique_ptr<ProblemCheck> problem_check_;
  std::vector<int> rank_devices_;  // See set_rank_devices.
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_EVALUATOR_H_
