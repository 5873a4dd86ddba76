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

}  // namespace kbench
