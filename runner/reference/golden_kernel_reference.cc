#include "runner/reference/golden_kernel_reference.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/launch_plan.h"
#include "contract/problem_util.h"
#include "contract/runner_job.h"
#include "runner/device/cuda_status.h"
#include "runner/device/device_checks.h"
#include "runner/device/harness_kernels.h"

namespace kbench {

GoldenKernelReference::GoldenKernelReference(const v1::RunnerJob& job,
                                             DeviceContext* ctx)
    : problem_(job.problem()), ctx_(ctx), fp64_problem_(job.problem()) {
  for (v1::TensorSpec& t : *fp64_problem_.mutable_tensors()) {
    if (t.dtype() != v1::DTYPE_INT32) t.set_dtype(v1::DTYPE_FP64);
  }
}

GoldenKernelReference::~GoldenKernelReference() = default;

absl::Status GoldenKernelReference::Fault(absl::Status s,
                                          absl::string_view what) const {
  if (s.ok()) return s;
  return absl::FailedPreconditionError(absl::StrCat(
      "problem '", problem_.name(), "': ", what, ": ", s.message()));
}

absl::StatusOr<std::unique_ptr<GoldenKernelReference>>
GoldenKernelReference::Create(const v1::RunnerJob& job, DeviceContext* ctx,
                              bool baselines) {
  std::unique_ptr<GoldenKernelReference> r(new GoldenKernelReference(job, ctx));
  RETURN_IF_ERROR(r->Load(job, baselines));
  return r;
}

absl::Status GoldenKernelReference::Load(const v1::RunnerJob& job,
                                         bool baselines) {
  if (job.golden_cubin().empty()) {
    return Fault(
        absl::FailedPreconditionError(
            "the job carries no golden cubin; kbd compiles the problem's "
            "golden kernel and sends it with every job (a kbd of another "
            "version?)"),
        "its kernels do not load");
  }
  absl::StatusOr<ParsedPlan> plan =
      ProblemKernelPlan(job.golden_plan(), fp64_problem_, "its golden kernel");
  RETURN_IF_ERROR(Fault(plan.status(), "its kernels do not load"));
  golden_plan_ = *std::move(plan);
  absl::StatusOr<std::unique_ptr<CandidateModule>> golden =
      CandidateModule::Load(ctx_, job.golden_cubin(), job.golden_plan(),
                            fp64_problem_);
  RETURN_IF_ERROR(Fault(golden.status(), "its kernels do not load"));
  golden_ = *std::move(golden);
  if (!baselines) return absl::OkStatus();
  ASSIGN_OR_RETURN(baseline_, BaselinePipeline::Create(
                                  job.problem(),
                                  {&job.problem().baseline(), "baseline",
                                   &job.baseline_cubin(), &job.baseline_plan()},
                                  ctx_));
  if (job.problem().has_expert()) {
    ASSIGN_OR_RETURN(expert_, BaselinePipeline::Create(
                                  job.problem(),
                                  {&job.problem().expert(), "expert",
                                   &job.expert_cubin(), &job.expert_plan()},
                                  ctx_));
  }
  return absl::OkStatus();
}

absl::Status GoldenKernelReference::DeviceGolden(const TensorSet& tensors,
                                                 GoldenBuffers* golden) {
  // Whatever goes wrong here, sticky errors included, is the golden's
  // (trusted code) fault: the candidate's last run was checked before.
  return Fault(RunGolden(tensors, golden), "its golden kernel");
}

absl::Status GoldenKernelReference::RunGolden(const TensorSet& tensors,
                                              GoldenBuffers* golden) {
  const DimValues& dims = tensors.dims();
  cudaStream_t s = ctx_->stream();
  ASSIGN_OR_RETURN(TensorSet g, TensorSet::Allocate(fp64_problem_, dims));
  for (const TensorSet::Tensor& t : tensors.tensors()) {
    const TensorSet::Tensor* to = g.Find(t.spec->name());
    if (t.spec->role() == v1::TENSOR_ROLE_OUTPUT) continue;
    if (t.spec->dtype() == v1::DTYPE_INT32) {
      CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(to->buffer.get(), t.buffer.get(), t.buffer.bytes(),
                          cudaMemcpyDeviceToDevice, s),
          "copying an index input for the golden kernel");
    } else {
      CUDA_RETURN_IF_ERROR(
          LaunchToDouble(t.buffer.get(), t.spec->dtype(),
                         to->buffer.as<double>(), t.elements, s),
          "converting an input to fp64 for the golden kernel");
    }
  }
  // NaN in every output: an element the golden does not write shows.
  RETURN_IF_ERROR(g.PoisonOutputs(s));
  ASSIGN_OR_RETURN(const ConcretePlan plan, golden_plan_->Resolve(dims));
  RETURN_IF_ERROR(CheckDeviceLimits(plan, ctx_->spec(), golden_->StaticSmem()));
  ASSIGN_OR_RETURN(std::unique_ptr<BoundPlan> bound, golden_->Bind(plan, g));
  RETURN_IF_ERROR(bound->Enqueue());
  const cudaError_t ran = cudaStreamSynchronize(s);
  if (ran != cudaSuccess) {
    return CudaRtStatus(
        ran, absl::StrCat("running it at ", FormatDims(problem_, dims)));
  }
  for (const TensorSet::Tensor& t : g.tensors()) {
    if (t.spec->role() != v1::TENSOR_ROLE_OUTPUT) continue;
    ASSIGN_OR_RETURN(const ValueSummary summary,
                     DeviceValueSummary(t.buffer.as<double>(), t.elements, s));
    if (summary.nonfinite > 0) {
      return absl::InternalError(absl::StrCat(
          "it left ", summary.nonfinite, " of ", t.elements, " elements of '",
          t.spec->name(), "' NaN, infinite or unwritten at ",
          FormatDims(problem_, dims)));
    }
    RETURN_IF_ERROR(
        golden->Copy(t.spec->name(), t.buffer.as<double>(), t.elements, s));
  }
  // Scrub (after the copies above, on the same stream): a candidate must
  // not find the answer in freed memory.
  for (const TensorSet::Tensor& t : g.tensors()) {
    CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(t.buffer.get(), 0, t.buffer.bytes(), s),
        "scrubbing the golden result");
  }
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "scrubbing the golden");
  return absl::OkStatus();
}

}  // namespace kbench
