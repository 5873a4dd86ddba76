// JobService::Prepared, the validated form of a request: made by
// JobService::Prepare (server/core/job_service_prepare.cc) and used to compile
// and run the job (server/core/job_service.cc). Private to those two files.
//
// Ownership: `problem` is borrowed from the JobService's ProblemRegistry.
// Thread safety: a plain value; copy it to share it.
#ifndef KBENCH_SERVER_CORE_JOB_SERVICE_INTERNAL_H_
#define KBENCH_SERVER_CORE_JOB_SERVICE_INTERNAL_H_

#include <string>
#include <vector>

#include "contract/launch_plan.h"
#include "kbench/v1/kbench.pb.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"
#include "server/core/job_service.h"

namespace kbench {

struct JobService::Prepared {
  v1::JobKind kind = v1::JOB_KIND_UNSPECIFIED;
  v1::KernelRequest request;  // Filename defaulted, problem resolved.
  const v1::Problem* problem = nullptr;
  v1::LaunchPlan plan;
  std::vector<v1::ShapeSet> check_sets;
  // The plan resolved at each shape of check_sets (in order), checked
  // against the grid and block limits; OnCompiled checks shared memory.
  struct ResolvedShape {
    ConcretePlan plan;
    // For a hidden set's case, how errors name it (HiddenCaseWords: its
    // class, never its dims); "" for a visible one.
    std::string hidden_words;
  };
  std::vector<ResolvedShape> resolved;
  std::string timing_set;  // Submit and profile.
  v1::Shape timing_shape;
  int trials = 0;
  int budget_ms = 0;
  std::string arch;
  std::string digest;  // sha256 of the source.
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_JOB_SERVICE_INTERNAL_H_
