// ProblemKernels: a golden-kernel problem's trusted kernels (its golden, its
// baseline's file and its expert baseline's) compiled for one arch through the
// compile service, with their launch plans: what kbd sends with every job of
// the problem (RunnerJob.golden_cubin ...). The compile service's
// content-addressed cache makes these hits after kbd's start-up check compiled
// them; the result is kept here per (problem, arch) as well.
//
// Ownership: borrows the compile service, which must outlive it.
// Thread safety: thread-safe; `done` runs on a compile thread or, when the
// kernels are ready, on the caller's.
#ifndef KBENCH_SERVER_CORE_PROBLEM_KERNELS_H_
#define KBENCH_SERVER_CORE_PROBLEM_KERNELS_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "server/core/compile_service.h"

namespace kbench {

class ProblemKernels {
 public:
  struct Kernels {
    std::shared_ptr<const std::string> golden_cubin;
    v1::LaunchPlan golden_plan;
    std::shared_ptr<const std::string> baseline_cubin;  // Null: no file.
    v1::LaunchPlan baseline_plan;
    std::shared_ptr<const std::string> expert_cubin;  // Null: no file.
    v1::LaunchPlan expert_plan;
  };
  using Done =
      std::function<void(absl::StatusOr<std::shared_ptr<const Kernels>>)>;

  explicit ProblemKernels(CompileService* compiles) : compiles_(compiles) {}

  // The kernels of `problem` (REFERENCE_OP_GOLDEN_KERNEL) for `arch`.
  // FailedPrecondition when one does not compile or its plan does not
  // parse: the problem's files are at fault; other compile errors as the
  // compile service gives them.
  void Get(const v1::Problem& problem, const std::string& arch,
           const Done& done);

 private:
  CompileService* compiles_;
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<const Kernels>> ready_
      ABSL_GUARDED_BY(mu_);
};

// Fills `job`'s golden, baseline and expert fields from `kernels`.
void AttachProblemKernels(const ProblemKernels::Kernels& kernels,
                          v1::RunnerJob* job);

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_PROBLEM_KERNELS_H_
