#include "runner/evaluator.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/digest.h"
#include "base/status_macros.h"
#include "contract/launch_plan.h"
#include "contract/problem_util.h"
#include "runner/device/candidate_module.h"
#include "runner/device/cuda_status.h"
#include "runner/reference/reference_op.h"
#include "runner/repro_manifest.h"
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
  m->set_source_digest(Sha256Hex(job.source()));
  if (job.kind() == v1::JOB_KIND_SUBMIT || job.kind() == v1::JOB_KIND_PROFILE) {
    m->set_l2_flushed(!job.timing_hot_l2());
    const double stderr_pct =
        100 *
        (job.timing_max_rel_stderr() > 0 ? job.timing_max_rel_stderr() : 0.005);
    m->set_stopping_criterion(absl::StrFormat(
        "rel stderr <= %.2g%%, >= %d samples, <= %d ms", stderr_pct,
        job.timing_min_samples() > 0 ? job.timing_min_samples() : 20,
        job.timing_max_time_ms() > 0 ? job.timing_max_time_ms() : 1000));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Evaluator>> Evaluator::Create(
    DeviceContext* ctx) {
  std::unique_ptr<Evaluator> e(new Evaluator(ctx));
  ASSIGN_OR_RETURN(e->timing_, TimingRunner::Create(ctx));
  return e;
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
  ASSIGN_OR_RETURN(const v1::LaunchPlan plan, ParseLaunchPlan(job.source()));
  RETURN_IF_ERROR(ValidateLaunchPlan(plan, job.problem()));
  ASSIGN_OR_RETURN(std::unique_ptr<CandidateModule> module,
                   CandidateModule::Load(ctx_, cubin, plan, job.problem()));
  ASSIGN_OR_RETURN(std::unique_ptr<ReferenceOp> reference,
                   MakeReferenceOp(job.problem(), ctx_));

  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  const auto checking = Clock::now();
  CorrectnessChecker checker(ctx_, module.get(), reference.get(), plan);
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
    const absl::Status timed = timing_->Run(
        job, plan, cubin, module.get(), reference.get(), progress,
        result->mutable_timing(),
        job.kind() == v1::JOB_KIND_PROFILE ? result->mutable_profile()
                                           : nullptr,
        &wrong);
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
