// Evaluator::RunRanked: a job whose problem spans GPUs (docs/multi-gpu.md).
#include <memory>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/parsed_plan.h"
#include "contract/problem_util.h"
#include "contract/runner_job.h"
#include "runner/check/problem_check.h"
#include "runner/check/ranked_checker.h"
#include "runner/device/candidate_module.h"
#include "runner/device/rank_group.h"
#include "runner/evaluator.h"
#include "runner/host/shape_plans.h"
#include "runner/reference/golden_kernel_reference.h"

namespace kbench {

absl::Status Evaluator::RunRanked(const v1::RunnerJob& job,
                                  const std::string& cubin,
                                  const ProgressFn& progress,
                                  v1::JobResult* result) {
  const v1::Problem& problem = job.problem();
  const int world = problem.world_size();
  if (job.kind() != v1::JOB_KIND_CORRECTNESS) {
    return absl::UnimplementedError(absl::StrCat(
        "problem '", problem.name(), "' spans ", world,
        " GPUs; timing, profiling and sanitizing such a problem are not "
        "built yet (docs/multi-gpu.md), so submit, profile and sanitize end "
        "here: check the kernel on every rank with check_kernel"));
  }
  if (job.world_size() != world) {
    return absl::InternalError(absl::StrCat(
        "the job was leased for ", job.world_size(), " GPUs but its problem '",
        problem.name(), "' spans ", world));
  }
  RankGroup::Options group;
  group.devices = rank_devices_;
  if (group.devices.empty()) {
    group.devices.resize(world);
    std::iota(group.devices.begin(), group.devices.end(), ctx_->device());
  }
  if (static_cast<int>(group.devices.size()) != world) {
    return absl::FailedPreconditionError(
        absl::StrCat("this runner was given ", group.devices.size(),
                     " rank devices, but the problem spans ", world, " GPUs"));
  }
  progress(absl::StrCat("opening ", world, " ranks"));
  // Declared first: the modules below live on its contexts.
  ASSIGN_OR_RETURN(std::unique_ptr<RankGroup> ranks,
                   RankGroup::Create(ctx_, group));
  ASSIGN_OR_RETURN(const ParsedPlan parsed, JobPlan(job));
  std::vector<std::unique_ptr<CandidateModule>> modules;
  std::vector<CandidateModule*> module_ptrs;
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks->Select(r));
    ASSIGN_OR_RETURN(
        std::unique_ptr<CandidateModule> m,
        CandidateModule::Load(ranks->ctx(r), cubin, parsed.plan(), problem));
    module_ptrs.push_back(m.get());
    modules.push_back(std::move(m));
  }
  RETURN_IF_ERROR(ranks->Select(0));
  ShapePlans plans(&parsed, ctx_->spec(), modules[0]->StaticSmem());
  // The golden sees the gathered inputs, on rank 0: the job as it would be
  // for the problem's one-GPU view. It outlives the reference.
  v1::RunnerJob gathered_job = job;
  *gathered_job.mutable_problem() = GatheredProblem(problem);
  ASSIGN_OR_RETURN(std::unique_ptr<GoldenKernelReference> reference,
                   GoldenKernelReference::Create(gathered_job, ctx_,
                                                 /*baselines=*/false));
  progress("checking the problem's golden kernel");
  RETURN_IF_ERROR(problem_check_->Check(gathered_job, reference.get()));
  RankedChecker checker(ranks.get(), module_ptrs, reference.get(),
                        &gathered_job.problem(), &plans);
  const absl::Status checked =
      checker.Run(job, progress, result->mutable_correctness());
  for (uint64_t seed : checker.seeds()) {
    result->mutable_manifest()->add_seeds(seed);
  }
  RETURN_IF_ERROR(checked);
  if (!result->correctness().passed()) {
    result->set_verdict(v1::VERDICT_FAILED);
    result->set_message(result->correctness().message());
    return absl::OkStatus();
  }
  result->set_verdict(v1::VERDICT_PASSED);
  return absl::OkStatus();
}

}  // namespace kbench
