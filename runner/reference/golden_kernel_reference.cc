#include "runner/reference/golden_kernel_reference.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/launch_plan.h"
#include "contract/problem_data.h"
#include "contract/problem_util.h"
#include "contract/runner_job.h"
#include "runner/device/cuda_status.h"
#include "runner/device/device_checks.h"
#include "runner/device/harness_kernels.h"
#include "runner/reference/lt_util.h"

namespace kbench {
namespace {

std::string DimsText(const DimValues& dims) {
  std::string out;
  for (const auto& [name, value] : dims) {
    absl::StrAppend(&out, out.empty() ? "" : " ", name, "=", value);
  }
  return out;
}

cublasLtEpilogue_t Epilogue(const v1::MatmulStep& step) {
  const bool bias = !step.bias().empty();
  switch (step.activation()) {
    case v1::MatmulStep::ACTIVATION_RELU:
      return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case v1::MatmulStep::ACTIVATION_GELU:
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default:
      return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

// A column-major cuBLASLt layout for `o`, batched when `batch` > 1.
absl::Status MakeLayout(const LtOperand& o, cudaDataType_t type, int64_t batch,
                        cublasLtMatrixLayout_t* out) {
  RETURN_IF_ERROR(
      LtCheck(cublasLtMatrixLayoutCreate(out, type, o.rows, o.cols, o.ld),
              "creating a matrix layout"));
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    const int64_t stride = o.batch_stride;
    RETURN_IF_ERROR(LtCheck(
        cublasLtMatrixLayoutSetAttribute(
            *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
        "setting a batch count"));
    RETURN_IF_ERROR(
        LtCheck(cublasLtMatrixLayoutSetAttribute(
                    *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                    sizeof(stride)),
                "setting a batch stride"));
  }
  return absl::OkStatus();
}

}  // namespace

GoldenKernelReference::GoldenKernelReference(const v1::RunnerJob& job,
                                             DeviceContext* ctx)
    : problem_(job.problem()), ctx_(ctx), fp64_problem_(job.problem()) {
  for (v1::TensorSpec& t : *fp64_problem_.mutable_tensors()) {
    if (t.dtype() != v1::DTYPE_INT32) t.set_dtype(v1::DTYPE_FP64);
  }
}

GoldenKernelReference::~GoldenKernelReference() { DestroySteps(); }

absl::Status GoldenKernelReference::Fault(absl::Status s,
                                          absl::string_view what,
                                          bool keep_sticky) const {
  if (s.ok() || (keep_sticky && IsSticky(s))) return s;
  return absl::FailedPreconditionError(absl::StrCat(
      "problem '", problem_.name(), "': ", what, ": ", s.message()));
}

absl::StatusOr<std::unique_ptr<GoldenKernelReference>>
GoldenKernelReference::Create(const v1::RunnerJob& job, DeviceContext* ctx) {
  std::unique_ptr<GoldenKernelReference> r(new GoldenKernelReference(job, ctx));
  RETURN_IF_ERROR(r->Fault(r->Load(job), "its kernels do not load",
                           /*keep_sticky=*/false));
  return r;
}

absl::Status GoldenKernelReference::Load(const v1::RunnerJob& job) {
  if (job.golden_cubin().empty()) {
    return absl::FailedPreconditionError(
        "the job carries no golden cubin; kbd compiles the problem's golden "
        "kernel and sends it with every job (a kbd of another version?)");
  }
  ASSIGN_OR_RETURN(
      golden_plan_,
      ProblemKernelPlan(job.golden_plan(), fp64_problem_, "its golden kernel"));
  ASSIGN_OR_RETURN(golden_,
                   CandidateModule::Load(ctx_, job.golden_cubin(),
                                         job.golden_plan(), fp64_problem_));
  if (!job.problem().baseline().file().empty()) {
    if (job.baseline_cubin().empty()) {
      return absl::FailedPreconditionError(
          "the job carries no cubin of the baseline's kernels");
    }
    ASSIGN_OR_RETURN(baseline_plan_,
                     ProblemKernelPlan(job.baseline_plan(), job.problem(),
                                       "its baseline's kernels"));
    ASSIGN_OR_RETURN(baseline_,
                     CandidateModule::Load(ctx_, job.baseline_cubin(),
                                           job.baseline_plan(), job.problem()));
  }
  return ValidateBaselineSteps(
      job.problem(), baseline_plan_ ? &baseline_plan_->plan() : nullptr);
}

absl::Status GoldenKernelReference::DeviceGolden(const TensorSet& tensors,
                                                 GoldenBuffers* golden) {
  // Whatever goes wrong here, sticky errors included, is the golden's
  // (trusted code) fault: the candidate's last run was checked before.
  return Fault(RunGolden(tensors, golden), "its golden kernel",
               /*keep_sticky=*/false);
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
    return CudaRtStatus(ran, absl::StrCat("running it at ", DimsText(dims)));
  }
  for (const TensorSet::Tensor& t : g.tensors()) {
    if (t.spec->role() != v1::TENSOR_ROLE_OUTPUT) continue;
    ASSIGN_OR_RETURN(const ValueSummary summary,
                     DeviceValueSummary(t.buffer.as<double>(), t.elements, s));
    if (summary.nonfinite > 0) {
      return absl::InternalError(absl::StrCat(
          "it left ", summary.nonfinite, " of ", t.elements, " elements of '",
          t.spec->name(), "' NaN, infinite or unwritten at ", DimsText(dims)));
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

void GoldenKernelReference::DestroySteps() {
  for (Step& step : steps_) {
    if (!step.matmul) continue;
    Matmul& m = *step.matmul;
    if (m.op) cublasLtMatmulDescDestroy(m.op);
    for (cublasLtMatrixLayout_t l : {m.a_desc, m.b_desc, m.d_desc}) {
      if (l) cublasLtMatrixLayoutDestroy(l);
    }
  }
  steps_.clear();
}

absl::StatusOr<std::pair<void*, int64_t>> GoldenKernelReference::Operand(
    const std::string& name, const TensorSet& tensors) const {
  for (const TensorSet::Tensor& t : outputs_) {
    if (t.spec->name() == name) {
      return std::make_pair(t.buffer.get(),
                            static_cast<int64_t>(t.buffer.bytes()));
    }
  }
  if (const TensorSet::Tensor* t = tensors.Find(name)) {
    return std::make_pair(t->buffer.get(),
                          static_cast<int64_t>(t->buffer.bytes()));
  }
  if (bound_ != nullptr) {
    const CUdeviceptr w = bound_->WorkspacePtr(name);
    for (const ConcreteWorkspace& cw : bound_->plan().workspaces) {
      if (cw.name == name && w != 0) {
        // A device address the driver API gave as an integer; cuBLASLt
        // takes it as a pointer.
        return std::make_pair(
            reinterpret_cast<void*>(w),  // NOLINT(performance-no-int-to-ptr)
            cw.bytes);
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("problem '", problem_.name(), "': the baseline names '",
                   name, "', which is no tensor or workspace"));
}

absl::Status GoldenKernelReference::PrepareMatmul(const v1::MatmulStep& step,
                                                  int index,
                                                  const TensorSet& tensors,
                                                  Matmul* m) {
  const std::string where =
      absl::StrCat("problem '", problem_.name(), "': baseline step ", index,
                   " (matmul) at ", DimsText(tensors.dims()));
  ASSIGN_OR_RETURN(m->layout, LayOutMatmul(step, tensors.dims()));
  absl::StatusOr<v1::DType> dtype = MatmulDType(problem_, step);
  if (!dtype.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", dtype.status().message()));
  }
  ASSIGN_OR_RETURN(const cudaDataType_t type, CudaType(*dtype));
  const int64_t esize = DTypeSize(*dtype);
  const MatmulLayout& l = m->layout;
  // Every operand's buffer must hold what the matmul reads or writes.
  struct Need {
    const LtOperand* o;
    void** ptr;
  };
  void* a = nullptr;
  void* b = nullptr;
  for (const Need& need : {Need{&l.a, &a}, Need{&l.b, &b}, Need{&l.d, &m->d}}) {
    ASSIGN_OR_RETURN(const auto buffer, Operand(need.o->name, tensors));
    const int64_t bytes = SpanElements(*need.o, l.batch) * esize;
    if (bytes > buffer.second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": '", need.o->name, "' is ", buffer.second,
                       " bytes; the matmul spans ", bytes));
    }
    *need.ptr = buffer.first;
  }
  m->a = a;
  m->b = b;
  RETURN_IF_ERROR(LtCheck(
      cublasLtMatmulDescCreate(&m->op,
                               step.allow_tf32() && *dtype == v1::DTYPE_FP32
                                   ? CUBLAS_COMPUTE_32F_FAST_TF32
                                   : CUBLAS_COMPUTE_32F,
                               CUDA_R_32F),
      "creating a matmul descriptor"));
  const cublasOperation_t ta = l.a.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = l.b.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(m->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta,
                                 sizeof(ta));
  cublasLtMatmulDescSetAttribute(m->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb,
                                 sizeof(tb));
  const cublasLtEpilogue_t epilogue = Epilogue(step);
  cublasLtMatmulDescSetAttribute(m->op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                 &epilogue, sizeof(epilogue));
  if (!l.bias.empty()) {
    ASSIGN_OR_RETURN(const auto bias, Operand(l.bias, tensors));
    if (l.m * esize > bias.second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": bias '", l.bias, "' is ", bias.second,
                       " bytes; it needs ", l.m * esize));
    }
    const void* ptr = bias.first;
    cublasLtMatmulDescSetAttribute(m->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                   &ptr, sizeof(ptr));
  }
  RETURN_IF_ERROR(MakeLayout(l.a, type, l.batch, &m->a_desc));
  RETURN_IF_ERROR(MakeLayout(l.b, type, l.batch, &m->b_desc));
  RETURN_IF_ERROR(MakeLayout(l.d, type, l.batch, &m->d_desc));
  ASSIGN_OR_RETURN(m->algo,
                   ChooseAlgo(ctx_, m->op, m->a_desc, m->b_desc, m->d_desc));
  return absl::OkStatus();
}

absl::Status GoldenKernelReference::PrepareEager(const TensorSet& tensors) {
  return Fault(Prepare(tensors), "its baseline", /*keep_sticky=*/true);
}

absl::Status GoldenKernelReference::Prepare(const TensorSet& tensors) {
  if (ctx_->cublaslt() == nullptr) {
    return absl::FailedPreconditionError("this runner has no cuBLASLt handle");
  }
  DestroySteps();
  bound_.reset();
  outputs_.clear();
  launches_.reset();
  uses_lt_ = false;
  std::map<std::string, CUdeviceptr> own;
  for (const TensorSet::Tensor& t : tensors.tensors()) {
    if (t.spec->role() != v1::TENSOR_ROLE_OUTPUT) continue;
    TensorSet::Tensor o;
    o.spec = t.spec;
    o.extents = t.extents;
    o.elements = t.elements;
    ASSIGN_OR_RETURN(o.buffer, DeviceBuffer::Allocate(t.buffer.bytes()));
    // Poisoned, as a candidate's outputs are: an element the baseline
    // never writes then reads as not finite, not as a stale value.
    CUDA_RETURN_IF_ERROR(
        LaunchFillNaN(o.buffer.get(), t.spec->dtype(), t.elements,
                      ctx_->stream()),
        absl::StrCat("poisoning the baseline's output '", t.spec->name(), "'"));
    own[t.spec->name()] = reinterpret_cast<CUdeviceptr>(o.buffer.get());
    outputs_.push_back(std::move(o));
  }
  if (baseline_ != nullptr) {
    ASSIGN_OR_RETURN(const ConcretePlan plan,
                     baseline_plan_->Resolve(tensors.dims()));
    RETURN_IF_ERROR(
        CheckDeviceLimits(plan, ctx_->spec(), baseline_->StaticSmem()));
    ASSIGN_OR_RETURN(bound_, baseline_->Bind(plan, tensors, nullptr, &own));
  }
  int next_launch = 0;
  const v1::Baseline& baseline = problem_.baseline();
  for (int i = 0; i < baseline.steps_size(); ++i) {
    Step step;
    if (baseline.steps(i).step_case() == v1::BaselineStep::kLaunch) {
      step.launch = next_launch++;
    } else {
      step.matmul = std::make_unique<Matmul>();
      uses_lt_ = true;
      // Owned by steps_ at once, so that a failure below frees it.
      Matmul* m = step.matmul.get();
      steps_.push_back(std::move(step));
      RETURN_IF_ERROR(PrepareMatmul(baseline.steps(i).matmul(), i, tensors, m));
      continue;
    }
    steps_.push_back(std::move(step));
  }
  return absl::OkStatus();
}

absl::Status GoldenKernelReference::RunEager() {
  // A sticky error here is the candidate's, from its run before.
  return Fault(RunBaseline(), "its baseline", /*keep_sticky=*/true);
}

absl::Status GoldenKernelReference::RunBaseline() {
  cudaStream_t s = ctx_->stream();
  for (const Step& step : steps_) {
    if (!step.matmul) {
      // The file's launch alone: a baseline's workspaces are not zeroed.
      RETURN_IF_ERROR(bound_->EnqueueLaunch(step.launch));
      continue;
    }
    const Matmul& m = *step.matmul;
    const float alpha = static_cast<float>(m.layout.alpha), beta = 0.0f;
    RETURN_IF_ERROR(LtCheck(
        cublasLtMatmul(ctx_->cublaslt(), m.op, &alpha, m.a, m.a_desc, m.b,
                       m.b_desc, &beta, m.d, m.d_desc, m.d, m.d_desc, &m.algo,
                       ctx_->lt_workspace(), ctx_->lt_workspace_bytes(), s),
        "running a baseline matmul"));
  }
  return absl::OkStatus();
}

const TensorSet::Tensor* GoldenKernelReference::EagerOutput(
    const std::string& name) {
  for (const TensorSet::Tensor& t : outputs_) {
    if (t.spec->name() == name) return &t;
  }
  return nullptr;
}

int GoldenKernelReference::EagerLaunches() {
  if (!launches_) {
    launches_ = CountLaunches(ctx_, [this] { return RunEager(); });
  }
  return launches_->kernels + launches_->memsets;
}

int GoldenKernelReference::EagerKernels() {
  EagerLaunches();
  return launches_->kernels;
}

std::string GoldenKernelReference::EagerName() const {
  return problem_.baseline().name();
}

int64_t GoldenKernelReference::EagerScratchBytes() const {
  int64_t bytes =
      uses_lt_ ? static_cast<int64_t>(ctx_->lt_workspace_bytes()) : 0;
  if (bound_ != nullptr) {
    for (const ConcreteWorkspace& w : bound_->plan().workspaces) {
      bytes += w.bytes;
    }
  }
  return bytes;
}

}  // namespace kbench
