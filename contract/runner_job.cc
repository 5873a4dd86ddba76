#include "contract/runner_job.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kbench {

absl::StatusOr<ParsedPlan> JobPlan(const v1::RunnerJob& job) {
  if (job.plan().launches().empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job.job_id(),
        " carries no launch plan (RunnerJob.plan has no launch); kbd sends "
        "the plan it parsed from the source's `// @kb` lines, and the runner "
        "does not read them itself. Run the job through a kbd of the same "
        "version as this worker"));
  }
  const size_t bytes = job.plan().ByteSizeLong();
  if (bytes > kMaxPlanBytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job.job_id(), " carries a launch plan of ", bytes,
                     " bytes; the runner takes at most ", kMaxPlanBytes));
  }
  return ParsedPlan::Create(job.plan(), job.problem());
}

absl::StatusOr<ParsedPlan> ProblemKernelPlan(const v1::LaunchPlan& plan,
                                             const v1::Problem& problem,
                                             absl::string_view what) {
  if (plan.launches().empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "problem '", problem.name(), "': the job carries no launch plan for ",
        what, "; kbd sends it with every job of a golden-kernel problem"));
  }
  const size_t bytes = plan.ByteSizeLong();
  if (bytes > kMaxPlanBytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("problem '", problem.name(), "': the plan of ", what,
                     " is ", bytes, " bytes; at most ", kMaxPlanBytes));
  }
  return ParsedPlan::Create(plan, problem);
}

}  // namespace kbench
