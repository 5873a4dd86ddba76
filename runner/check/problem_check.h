// ProblemCheck: the checks of a golden-kernel problem that need a GPU, run
// before a runner uses the problem for the first time (docs/problems.md):
//  - its golden reproduces every check case, whose outputs were computed
//    off-line in fp64 (so the golden is checked against an independent
//    computation);
//  - its baseline, and its expert baseline when it has one, agree with its
//    golden within the problem's tolerance at the first shape of its
//    default set (not for a golden-only reference, whose Eager() is null:
//    a problem that spans GPUs, until its NCCL baseline can run).
// (That an all-zero and a constant output fail is checked on every shape
// by the CorrectnessChecker.) A problem that fails is refused for every
// job, with why; the outcome is kept per problem and kernels' digest.
//
// Ownership: borrows the context. Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_CHECK_PROBLEM_CHECK_H_
#define KBENCH_RUNNER_CHECK_PROBLEM_CHECK_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "kbench/v1/worker.pb.h"
#include "runner/device/device_context.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class ProblemCheck {
 public:
  explicit ProblemCheck(DeviceContext* ctx) : ctx_(ctx) {}

  // OK when `job`'s problem passes (or is not a golden-kernel problem);
  // FailedPrecondition naming the problem and the check it failed.
  // `reference` is the job's (made from the job's cubins).
  absl::Status Check(const v1::RunnerJob& job, ReferenceOp* reference);

  // Largest relative disagreement a check case allows: the golden computes
  // in fp64 as the off-line computation did, so only rounding differs.
  static constexpr double kCaseRelTol = 1e-9;

 private:
  absl::Status Run(const v1::RunnerJob& job, ReferenceOp* reference);
  absl::Status CheckCase(const v1::Problem& problem, const v1::CheckCase& c,
                         ReferenceOp* reference);

  DeviceContext* ctx_;
  std::map<std::string, absl::Status> done_;  // By problem and digest.
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_CHECK_PROBLEM_CHECK_H_
