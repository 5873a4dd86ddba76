// Evaluator::RunRanked: a job whose problem spans GPUs (docs/multi-gpu.md).
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/parsed_plan.h"
#include "contract/problem_util.h"
#include "contract/runner_job.h"
#include "runner/check/problem_check.h"
#include "runner/check/ranked_checker.h"
#include "runner/check/ranked_runs.h"
#include "runner/device/candidate_module.h"
#include "runner/device/rank_group.h"
#include "runner/evaluator.h"
#include "runner/host/shape_plans.h"
#include "runner/profile/kernel_activity.h"
#include "runner/profile/plan_profiler.h"
#include "runner/reference/baseline_pipeline.h"
#include "runner/reference/golden_kernel_reference.h"
#include "runner/reference/nccl_gather.h"
#include "runner/reference/peer_gather.h"
#include "runner/timing/ranked_timer.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// Loads the candidate on every rank's context.
absl::Status LoadOnEveryRank(RankGroup* ranks, const std::string& cubin,
                             const ParsedPlan& parsed,
                             const v1::Problem& problem,
                             PerRank<CandidateModule>* modules) {
  for (int r = 0; r < ranks->world_size(); ++r) {
    RETURN_IF_ERROR(ranks->Select(r));
    ASSIGN_OR_RETURN(
        std::unique_ptr<CandidateModule> m,
        CandidateModule::Load(ranks->ctx(r), cubin, parsed.plan(), problem));
    modules->Add(std::move(m));
  }
  return ranks->Select(0);
}

// Makes the baseline's pipeline on every rank, its collective step on
// `gather`.
absl::Status MakeBaselines(const v1::RunnerJob& job, RankGroup* ranks,
                           Collective* gather,
                           PerRank<BaselinePipeline>* baselines) {
  for (int r = 0; r < ranks->world_size(); ++r) {
    RETURN_IF_ERROR(ranks->Select(r));
    BaselinePipeline::Source source{&job.problem().baseline(), "baseline",
                                    &job.baseline_cubin(),
                                    &job.baseline_plan()};
    source.gather = gather;
    source.rank = r;
    ASSIGN_OR_RETURN(
        std::unique_ptr<BaselinePipeline> b,
        BaselinePipeline::Create(job.problem(), source, ranks->ctx(r)));
    baselines->Add(std::move(b));
  }
  return ranks->Select(0);
}

// The reference whose counters a profile of one rank reads: that rank's
// baseline pipeline (PlanCounters reads only Eager()). Borrows it.
class RankBaseline : public ReferenceOp {
 public:
  explicit RankBaseline(EagerPipeline* eager) : eager_(eager) {}
  absl::Status DeviceGolden(const TensorSet&, GoldenBuffers*) override {
    return absl::InternalError(
        "one rank's baseline has no golden: a problem that spans GPUs has "
        "its golden computed from the gathered inputs");
  }
  EagerPipeline* Eager() override { return eager_; }

 private:
  EagerPipeline* eager_;
};

}  // namespace

absl::Status Evaluator::RunRanked(const v1::RunnerJob& job,
                                  const std::string& cubin,
                                  const ProgressFn& progress,
                                  v1::JobResult* result) {
  const v1::Problem& problem = job.problem();
  const int world = problem.world_size();
  // A sanitize job is the check, run under compute-sanitizer by kbworker
  // (every rank's kernels are instrumented); a profile adds the submit's
  // timing and rank 0's counters.
  if (job.kind() != v1::JOB_KIND_CORRECTNESS &&
      job.kind() != v1::JOB_KIND_SUBMIT &&
      job.kind() != v1::JOB_KIND_SANITIZE &&
      job.kind() != v1::JOB_KIND_PROFILE) {
    return absl::InternalError(absl::StrCat("a runner job of kind ",
                                            v1::JobKind_Name(job.kind()),
                                            " runs no kernel"));
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
  PerRank<CandidateModule> modules(ranks.get());
  RETURN_IF_ERROR(
      LoadOnEveryRank(ranks.get(), cubin, parsed, problem, &modules));
  ShapePlans plans(&parsed, ctx_->spec(), modules.at(0)->StaticSmem());
  // The golden sees the gathered inputs, on rank 0: the job as it would be
  // for the problem's one-GPU view. It outlives the reference.
  v1::RunnerJob gathered_job = job;
  *gathered_job.mutable_problem() = GatheredProblem(problem);
  ASSIGN_OR_RETURN(std::unique_ptr<GoldenKernelReference> reference,
                   GoldenKernelReference::Create(gathered_job, ctx_,
                                                 /*baselines=*/false));
  progress("checking the problem's golden kernel");
  RETURN_IF_ERROR(problem_check_->Check(gathered_job, reference.get()));
  RankedChecker checker(ranks.get(), modules.ptrs(), reference.get(),
                        &gathered_job.problem(), &plans);
  const absl::Status checked =
      checker.Run(job, progress, result->mutable_correctness());
  for (uint64_t seed : checker.visible_seeds()) {
    result->mutable_manifest()->add_seeds(seed);
  }
  result->mutable_manifest()->set_hidden_trials(checker.hidden_trials());
  RETURN_IF_ERROR(checked);
  if (!result->correctness().passed()) {
    result->set_verdict(v1::VERDICT_FAILED);
    result->set_message(result->correctness().message());
    return absl::OkStatus();
  }
  if (job.kind() == v1::JOB_KIND_SUBMIT || job.kind() == v1::JOB_KIND_PROFILE) {
    std::string wrong;
    // Fresh modules, so device globals set during the check start over.
    modules.Clear();
    RETURN_IF_ERROR(TimeRanked(job, gathered_job, cubin, parsed, ranks.get(),
                               &plans, reference.get(), progress, result,
                               &wrong));
    if (!wrong.empty()) {
      result->set_verdict(v1::VERDICT_FAILED);
      result->set_message(wrong);
      return absl::OkStatus();
    }
  }
  result->set_verdict(v1::VERDICT_PASSED);
  return absl::OkStatus();
}

absl::Status Evaluator::TimeRanked(const v1::RunnerJob& job,
                                   const v1::RunnerJob& gathered_job,
                                   const std::string& cubin,
                                   const ParsedPlan& parsed, RankGroup* ranks,
                                   ShapePlans* plans, ReferenceOp* golden,
                                   const ProgressFn& progress,
                                   v1::JobResult* result, std::string* wrong) {
  const v1::Problem& problem = job.problem();
  const v1::Problem& gathered = gathered_job.problem();
  const int world = ranks->world_size();
  // Declared before what is bound to them.
  PerRank<CandidateModule> modules(ranks);
  RETURN_IF_ERROR(LoadOnEveryRank(ranks, cubin, parsed, problem, &modules));
  // As the checker takes a shape's dims: from the problem as placed.
  ASSIGN_OR_RETURN(const DimValues dims,
                   ShapeDims(problem, job.timing_shape()));
  // The baseline on every rank, its all-gather shared by the ranks: NCCL's
  // where it runs, else an all-gather by peer reads standing in.
  std::unique_ptr<Collective> gather;
  bool nccl = false;
  if (BaselinePipeline::HasCollective(problem.baseline())) {
    std::vector<int> devices(world);
    for (int r = 0; r < world; ++r) devices[r] = ranks->device(r);
    absl::StatusOr<std::unique_ptr<NcclGather>> made =
        NcclGather::Create(devices);
    RETURN_IF_ERROR(ranks->Select(0));
    if (made.ok()) {
      gather = *std::move(made);
      nccl = true;
    } else {
      spdlog::info("the baseline's all-gather is not NCCL's: {}",
                   std::string(made.status().message()));
      gather = std::make_unique<PeerGather>(
          world, std::string(made.status().message()));
    }
  } else {
    gather = std::make_unique<PeerGather>(world, "");
  }
  PerRank<BaselinePipeline> baselines(ranks);
  RETURN_IF_ERROR(MakeBaselines(job, ranks, gather.get(), &baselines));
  ASSIGN_OR_RETURN(
      std::unique_ptr<RankedRuns> runs,
      RankedRuns::Create(ranks, modules.ptrs(), plans, &gathered, dims));
  ASSIGN_OR_RETURN(std::unique_ptr<RankedTimer> timer,
                   RankedTimer::Create(ranks, KernelActivity::ToolAttached()));
  RankedTimer::Params timed;
  timed.job = &job;
  timed.where = absl::StrCat(job.timing_set(), "/", job.timing_shape().name(),
                             " (", FormatDims(gathered, dims), ")");
  timed.runs = runs.get();
  timed.baselines = baselines.ptrs();
  timed.collective = gather.get();
  timed.golden = golden;
  ASSIGN_OR_RETURN(timed.flops, ProblemFlops(gathered, dims));
  ASSIGN_OR_RETURN(timed.min_bytes, ProblemMinBytes(gathered, dims));
  for (const v1::TensorSpec& t : problem.tensors()) {
    timed.half_precision |=
        t.dtype() == v1::DTYPE_BF16 || t.dtype() == v1::DTYPE_FP16;
  }
  timed.progress = progress;
  RETURN_IF_ERROR(timer->Run(timed, result->mutable_timing(), wrong));
  if (job.kind() != v1::JOB_KIND_PROFILE || !wrong->empty()) {
    return absl::OkStatus();
  }

  // The profile: rank 0's plan alone, its peers' inputs in place (what
  // Nsight Compute counts of one rank, serializing kernels). NCCL's
  // all-gather would wait there for the other ranks, so the baseline
  // counted beside it gathers by peer reads.
  std::unique_ptr<PeerGather> alone;
  PerRank<BaselinePipeline> counted(ranks);
  EagerPipeline* rank0_baseline = baselines.at(0);
  if (nccl) {
    alone = std::make_unique<PeerGather>(
        world,
        "NCCL's waits for every rank, and the counters run rank 0 alone");
    RETURN_IF_ERROR(MakeBaselines(job, ranks, alone.get(), &counted));
    for (int r = 0; r < world; ++r) {
      RETURN_IF_ERROR(ranks->Select(r));
      RETURN_IF_ERROR(counted.at(r)->Prepare(runs->tensors(r)));
    }
    RETURN_IF_ERROR(ranks->Select(0));
    rank0_baseline = counted.at(0);
  }
  RankBaseline reference(rank0_baseline);
  PlanProfiler::Params profiled;
  profiled.job = &job;
  profiled.dims = &dims;
  profiled.where = absl::StrCat(timed.where, ", rank 0 of ", world);
  profiled.cubin = &cubin;
  profiled.module = modules.at(0);
  profiled.tensors = &runs->tensors(0);
  profiled.bound = runs->bound(0);
  profiled.reference = &reference;
  profiled.progress = progress;
  profiled.work = &gathered;
  profiled.work_share = 1.0 / world;
  profiled.rank = 0;
  profiled.world_size = world;
  profiled.peers = runs->Peers();
  return profiler_->Run(profiled, result->timing(), result->mutable_profile());
}

}  // namespace kbench
