// What the runner checks of the RunnerJob it receives before it uses the
// launch plan. kbd parses the plan from the source's `// @kb` lines once and
// sends it in RunnerJob.plan; the runner no longer reads those lines, and
// the plan reaches it from another process over a pipe, so it is input to
// check like any other: present, of a bounded size, and valid for the
// job's problem.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef KBENCH_CONTRACT_RUNNER_JOB_H_
#define KBENCH_CONTRACT_RUNNER_JOB_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "contract/parsed_plan.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

// Largest serialized plan a runner takes. kbd refuses larger plans
// (InvalidArgument) when it parses them: a plan's encoding is usually
// shorter than its `// @kb` text, but not always (an args() list costs 3
// bytes a name where the text costs 2).
inline constexpr size_t kMaxPlanBytes = 256 * 1024;

// The job's plan, validated against job.problem() and parsed once
// (ParsedPlan borrows job.problem(): `job` must outlive the result).
// Errors: FailedPrecondition when the job carries no plan (no launch) or
// one over kMaxPlanBytes, which is kbd's fault, not the kernel's (the
// verdict is `error`); InvalidArgument from ParsedPlan::Create when the
// plan does not fit the problem (as when the runner parsed the source
// itself: `rejected`).
absl::StatusOr<ParsedPlan> JobPlan(const v1::RunnerJob& job);

// The plan of one of a problem's trusted kernels that a job carries (its
// golden's or its baseline file's, `what` in messages), checked as
// JobPlan checks the candidate's: present, bounded, valid for `problem`.
absl::StatusOr<ParsedPlan> ProblemKernelPlan(const v1::LaunchPlan& plan,
                                             const v1::Problem& problem,
                                             absl::string_view what);

}  // namespace kbench

#endif  // KBENCH_CONTRACT_RUNNER_JOB_H_
