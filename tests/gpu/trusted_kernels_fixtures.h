// AttachTrustedKernels: for gpu tests that drive the Evaluator without kbd,
// what kbd's ProblemKernels does for every job (and RunHealthy, which runs
// such a job): a problem's golden, baseline
// and expert sources compiled by NVRTC for the test GPU's arch, with their
// launch plans, set on the job (RunnerJob.golden_cubin ...).
//
// Thread safety: none needed (a test's thread).
#ifndef KBENCH_TESTS_GPU_TRUSTED_KERNELS_FIXTURES_H_
#define KBENCH_TESTS_GPU_TRUSTED_KERNELS_FIXTURES_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/nvrtc_compiler.h"
#include "contract/launch_plan.h"
#include "contract/problem_util.h"
#include "gtest/gtest.h"
#include "kbench/v1/worker.pb.h"
#include "runner/evaluator.h"

namespace kbench {
namespace testing {

inline absl::Status AttachTrustedKernels(const v1::Problem& problem,
                                         const std::string& arch,
                                         v1::RunnerJob* job) {
  for (const ProblemSource& s : ProblemSources(problem)) {
    if (s.kind == ProblemSource::kExample) continue;
    absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(*s.source);
    if (!plan.ok()) return plan.status();
    absl::StatusOr<CompileOutput> out =
        NvrtcCompiler().Compile(*s.source, *s.file, arch);
    if (!out.ok()) return out.status();
    if (!out->report.success()) {
      return absl::InternalError(absl::StrCat(
          s.what, " '", *s.file, "' does not compile: ", out->report.log()));
    }
    switch (s.kind) {
      case ProblemSource::kGolden:
        job->set_golden_cubin(out->cubin);
        *job->mutable_golden_plan() = *std::move(plan);
        break;
      case ProblemSource::kBaseline:
        job->set_baseline_cubin(out->cubin);
        *job->mutable_baseline_plan() = *std::move(plan);
        break;
      case ProblemSource::kExpert:
        job->set_expert_cubin(out->cubin);
        *job->mutable_expert_plan() = *std::move(plan);
        break;
      case ProblemSource::kExample:
        break;
    }
  }
  return absl::OkStatus();
}

// Runs `job` in `eval`, as kbrunner does, and expects the runner to stay
// healthy (no sticky CUDA error).
inline v1::JobResult RunHealthy(Evaluator* eval, const v1::RunnerJob& job) {
  bool unhealthy = false;
  v1::JobResult r = eval->Run(
      job, [](const std::string&) {}, &unhealthy);
  EXPECT_FALSE(unhealthy) << r.message();
  return r;
}

}  // namespace testing
}  // namespace kbench

#endif  // KBENCH_TESTS_GPU_TRUSTED_KERNELS_FIXTURES_H_
