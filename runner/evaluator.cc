#include "runner/evaluator.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/digest.h"
#include "base/status_macros.h"
#include "contract/job_defaults.h"
#include "contract/launch_plan.h"
#include "contract/parsed_plan.h"
#include "contract/problem_util.h"
#include "contract/runner_job.h"
#include "runner/check/problem_check.h"
#include "runner/device/candidate_module.h"
#include "runner/device/cuda_status.h"
#include "runner/device/l2_flusher.h"
#include "runner/device/stream_blocker.h"
#include "runner/device/tensor_set.h"
#include "runner/profile/kernel_activity.h"
#include "runner/profile/plan_profiler.h"
#include "runner/reference/reference_op.h"
#include "runner/repro_manifest.h"
#include "runner/timing/plan_timer.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

void SetError(const absl::Status& status, v1::JobResult* result) {
  result->mutable_error()->set_code(static_cast<int>(status.code()));
  result->mutable_error()->set_message(std::string(status.message()));
  result->set_message(std::string(status.message()));
}

// The parts of the manifest known before running.
void FillManifest(const v1::RunnerJob& job, const v1::GpuSpec& spec,
                  const NvrtcCompiler& compiler, v1::ReproManifest* m) {
  FillManifestGpu(spec, m);
  for (const std::string& o : compiler.OptionsFor(spec.arch())) {
    m->add_compile_options(o);
  }
  m->set_trials(job.trials() > 0 ? job.trials() : 1);
  m->set_problem_digest(ProtoDigest(job.problem()));
  for (const v1::ShapeSet& set : job.check_sets()) {
    if (!set.hidden()) {
      (*m->mutable_shape_set_digests())[set.name()] = ProtoDigest(set);
    }
  }
  if (!job.timing_set().empty()) {
    if (const v1::ShapeSet* t = FindShapeSet(job.problem(), job.timing_set());
        t != nullptr && !t->hidden()) {
      (*m->mutable_shape_set_digests())[t->name()] = ProtoDigest(*t);
    }
  }
  // kbd's digest, under which it stored the source; a job made by hand
  // (kbrunner --oneshot) may come without one.
  m->set_source_digest(job.source_digest().empty() ? Sha256Hex(job.source())
                                                   : job.source_digest());
  if (job.kind() == v1::JOB_KIND_SUBMIT || job.kind() == v1::JOB_KIND_PROFILE) {
    m->set_l2_flushed(!job.timing_hot_l2());
    const v1::StoppingCriterion stop = WithStoppingDefaults(job.stopping());
    m->set_stopping_criterion(absl::StrFormat(
        "median rel stderr <= %.2g%%, >= %d samples, <= %d ms",
        100 * stop.max_rel_stderr(), stop.min_samples(), stop.max_time_ms()));
  }
}

}  // namespace

Evaluator::Evaluator(DeviceContext* ctx) : ctx_(ctx) {}

absl::StatusOr<std::unique_ptr<Evaluator>> Evaluator::Create(
    DeviceContext* ctx) {
  std::unique_ptr<Evaluator> e(new Evaluator(ctx));
  // The flusher (2x L2) and the blocker are made once per runner.
  ASSIGN_OR_RETURN(e->flusher_, L2Flusher::Create(ctx->spec().l2_bytes()));
  ASSIGN_OR_RETURN(e->blocker_,
                   StreamBlocker::Create(/*timeout_ms=*/2000,
                                         KernelActivity::ToolAttached()));
  ASSIGN_OR_RETURN(
      e->timer_, PlanTimer::Create(ctx, e->flusher_.get(), e->blocker_.get()));
  e->profiler_ =
      std::make_unique<PlanProfiler>(ctx, e->flusher_.get(), e->blocker_.get());
  e->problem_check_ = std::make_unique<ProblemCheck>(ctx);
  return e;
}

// The profiler and the timer go first: they borrow the flusher and the
// blocker.
Evaluator::~Evaluator() {
  profiler_.reset();
  timer_.reset();
}

absl::StatusOr<std::string> Evaluator::CubinFor(const v1::RunnerJob& job,
                                                v1::JobResult* result) {
  // The runner never compiles: only kbd's jailed compiler may see a kernel
  // source with NVRTC, and kbd leases a job only to a worker of the arch it
  // compiled for. A mismatch here is kbd's bug, not the kernel's.
  if (job.cubin().empty() || job.cubin_arch() != ctx_->spec().arch()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the job carries a cubin for '", job.cubin_arch(), "' but this GPU is ",
        ctx_->spec().arch(),
        "; kbd should have compiled for this GPU's arch (the runner does not "
        "compile sources)"));
  }
  return job.cubin();
}

absl::Status Evaluator::RunChecked(const v1::RunnerJob& job,
                                   const ProgressFn& progress,
                                   v1::JobResult* result) {
  FillManifest(job, ctx_->spec(), compiler_, result->mutable_manifest());
  progress("loading the kernel");
  ASSIGN_OR_RETURN(const std::string cubin, CubinFor(job, result));
  if (SpansGpus(job.problem())) return RunRanked(job, cubin, progress, result);
  // kbd parsed and validated the plan; it came over a pipe, so it is
  // checked again, and its expressions parsed once for every shape.
  ASSIGN_OR_RETURN(const ParsedPlan parsed, JobPlan(job));
  const v1::LaunchPlan& plan = parsed.plan();
  ASSIGN_OR_RETURN(std::unique_ptr<CandidateModule> module,
                   CandidateModule::Load(ctx_, cubin, plan, job.problem()));
  // The timed module below is loaded from the same cubin: the same static
  // shared memory, so the plans checked here hold for it too.
  ShapePlans plans(&parsed, ctx_->spec(), module->StaticSmem());
  ASSIGN_OR_RETURN(std::unique_ptr<ReferenceOp> reference,
                   MakeReferenceOp(job, ctx_));
  if (job.problem().reference() == v1::REFERENCE_OP_GOLDEN_KERNEL) {
    progress("checking the problem's golden kernel and baseline");
    RETURN_IF_ERROR(problem_check_->Check(job, reference.get()));
  }

  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  const auto checking = Clock::now();
  CorrectnessChecker checker(ctx_, module.get(), reference.get(), &plans);
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
  const double checked_ms = ms_since(checking);
  if (job.kind() == v1::JOB_KIND_SUBMIT || job.kind() == v1::JOB_KIND_PROFILE) {
    const auto timing = Clock::now();
    // A fresh module, so device globals set during the check start over.
    module.reset();
    ASSIGN_OR_RETURN(module,
                     CandidateModule::Load(ctx_, cubin, plan, job.problem()));
    std::string wrong;
    const absl::Status timed =
        RunTimed(job, &plans, cubin, module.get(), reference.get(), progress,
                 result, &wrong);
    result->mutable_manifest()->set_measured_sm_clock_before_mhz(
        result->timing().sm_clock_before_mhz());
    result->mutable_manifest()->set_measured_sm_clock_after_mhz(
        result->timing().sm_clock_after_mhz());
    spdlog::info("correctness in {:.0f} ms, timing{} in {:.0f} ms", checked_ms,
                 job.kind() == v1::JOB_KIND_PROFILE ? " and counters" : "",
                 ms_since(timing));
    RETURN_IF_ERROR(timed);
    if (!wrong.empty()) {
      result->set_verdict(v1::VERDICT_FAILED);
      result->set_message(wrong);
      return absl::OkStatus();
    }
  }
  result->set_verdict(v1::VERDICT_PASSED);
  return absl::OkStatus();
}

absl::Status Evaluator::RunTimed(
    const v1::RunnerJob& job, ShapePlans* plans, const std::string& cubin,
    CandidateModule* module, ReferenceOp* reference, const ProgressFn& progress,
    v1::JobResult* result, std::string* wrong_output) {
  const v1::Problem& problem = job.problem();
  ASSIGN_OR_RETURN(const DimValues dims,
                   ShapeDims(problem, job.timing_shape()));
  const std::string where =
      absl::StrCat(job.timing_set(), "/", job.timing_shape().name(), " (",
                   FormatDims(problem, dims), ")");
  // Usually one of the checked shapes: resolved and checked already.
  ASSIGN_OR_RETURN(const ConcretePlan* cplan, plans->At(dims));
  // A helper child still starting (its CUDA context) must not overlap the
  // samples or the counters.
  profiler_->WaitQuiet();
  ASSIGN_OR_RETURN(TensorSet tensors, TensorSet::Allocate(problem, dims));
  ASSIGN_OR_RETURN(std::unique_ptr<BoundPlan> bound,
                   module->Bind(*cplan, tensors));
  PlanTimer::Params timed;
  timed.job = &job;
  timed.dims = &dims;
  timed.where = where;
  timed.tensors = &tensors;
  timed.bound = bound.get();
  timed.reference = reference;
  timed.progress = progress;
  RETURN_IF_ERROR(timer_->Run(timed, result->mutable_timing(), wrong_output));
  if (job.kind() != v1::JOB_KIND_PROFILE) return absl::OkStatus();
  PlanProfiler::Params profiled;
  profiled.job = &job;
  profiled.dims = &dims;
  profiled.where = where;
  profiled.cubin = &cubin;
  profiled.module = module;
  profiled.tensors = &tensors;
  profiled.bound = bound.get();
  profiled.reference = reference;
  profiled.progress = progress;
  return profiler_->Run(profiled, result->timing(), result->mutable_profile());
}

v1::JobResult Evaluator::Run(const v1::RunnerJob& job,
                             const ProgressFn& progress, bool* unhealthy) {
  const auto t0 = std::chrono::steady_clock::now();
  v1::JobResult result;
  *result.mutable_gpu() = ctx_->spec();
  *unhealthy = false;
  const absl::Status status = RunChecked(job, progress, &result);
  if (!status.ok()) {
    if (IsSticky(status)) {
      // The kernel crashed; no error status: this is the kernel's verdict.
      result.set_verdict(v1::VERDICT_CRASHED);
      result.set_message(std::string(status.message()));
      *unhealthy = true;
    } else if (result.has_compile() && !result.compile().success()) {
      result.set_verdict(v1::VERDICT_COMPILE_ERROR);
      SetError(status, &result);
    } else if (status.code() == absl::StatusCode::kInvalidArgument ||
               status.code() == absl::StatusCode::kResourceExhausted) {
      result.set_verdict(v1::VERDICT_REJECTED);
      SetError(status, &result);
    } else {
      result.set_verdict(v1::VERDICT_ERROR);
      SetError(status, &result);
    }
    // A non-sticky launch error must not leak into the next job; if the
    // device does not settle, the runner is replaced.
    if (!*unhealthy) {
      cudaGetLastError();
      if (cudaDeviceSynchronize() != cudaSuccess) *unhealthy = true;
    }
  }
  result.set_runner_ms(std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - t0)
                           .count());
  return result;
}

}  // namespace kbench
