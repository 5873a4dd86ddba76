#include "runner/reference/baseline_pipeline.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/launch_plan.h"
#include "contract/problem_data.h"
#include "contract/problem_util.h"
#include "contract/runner_job.h"
#include "runner/device/cuda_status.h"
#include "runner/device/harness_kernels.h"

namespace kbench {
namespace {

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

absl::StatusOr<std::unique_ptr<BaselinePipeline>> BaselinePipeline::Create(
    const v1::Problem& problem, const Source& source, DeviceContext* ctx) {
  std::unique_ptr<BaselinePipeline> p(
      new BaselinePipeline(problem, source, ctx));
  RETURN_IF_ERROR(p->Fault(p->Load(source), /*keep_sticky=*/false));
  return p;
}

BaselinePipeline::~BaselinePipeline() { DestroySteps(); }

absl::Status BaselinePipeline::Fault(absl::Status s, bool keep_sticky) const {
  if (s.ok() || (keep_sticky && IsSticky(s))) return s;
  return absl::FailedPreconditionError(absl::StrCat(
      "problem '", problem_.name(), "': its ",
      what_ == "baseline" ? "baseline" : "expert baseline", ": ", s.message()));
}

absl::Status BaselinePipeline::Load(const Source& source) {
  if (!baseline_.file().empty()) {
    if (source.cubin == nullptr || source.cubin->empty()) {
      return absl::FailedPreconditionError(
          "the job carries no cubin of its file's kernels; kbd compiles them "
          "and sends them with every job (a kbd of another version?)");
    }
    ASSIGN_OR_RETURN(plan_, ProblemKernelPlan(*source.plan, problem_,
                                              absl::StrCat(what_, "'s file")));
    ASSIGN_OR_RETURN(module_, CandidateModule::Load(ctx_, *source.cubin,
                                                    *source.plan, problem_));
  }
  return ValidateBaselineSteps(problem_, baseline_, what_,
                               plan_ ? &plan_->plan() : nullptr);
}

void BaselinePipeline::DestroySteps() {
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

absl::StatusOr<std::pair<void*, int64_t>> BaselinePipeline::Operand(
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
      absl::StrCat("it names '", name, "', which is no tensor or workspace"));
}

absl::Status BaselinePipeline::PrepareMatmul(const v1::MatmulStep& step,
                                             int index,
                                             const TensorSet& tensors,
                                             Matmul* m) {
  const std::string where =
      absl::StrCat(what_, ".steps[", index, "] (matmul) at ",
                   FormatDims(problem_, tensors.dims()));
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

absl::Status BaselinePipeline::Prepare(const TensorSet& tensors) {
  return Fault(DoPrepare(tensors), /*keep_sticky=*/true);
}

absl::Status BaselinePipeline::DoPrepare(const TensorSet& tensors) {
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
        absl::StrCat("poisoning its output '", t.spec->name(), "'"));
    own[t.spec->name()] = reinterpret_cast<CUdeviceptr>(o.buffer.get());
    outputs_.push_back(std::move(o));
  }
  if (module_ != nullptr) {
    ASSIGN_OR_RETURN(const ConcretePlan plan, plan_->Resolve(tensors.dims()));
    RETURN_IF_ERROR(
        CheckDeviceLimits(plan, ctx_->spec(), module_->StaticSmem()));
    ASSIGN_OR_RETURN(bound_, module_->Bind(plan, tensors, nullptr, &own));
  }
  int next_launch = 0;
  for (int i = 0; i < baseline_.steps_size(); ++i) {
    Step step;
    if (baseline_.steps(i).step_case() == v1::BaselineStep::kLaunch) {
      step.launch = next_launch++;
      steps_.push_back(std::move(step));
      continue;
    }
    if (baseline_.steps(i).step_case() == v1::BaselineStep::kNccl) {
      // An NCCL step belongs to a problem that spans GPUs, whose pipelines
      // the multi-rank runner makes, one per rank, with a shared gather.
      if (gather_ == nullptr) {
        return absl::FailedPreconditionError(absl::StrCat(
            what_, " step ", i,
            " is a collective, which only runs on every rank of a problem "
            "that spans GPUs (docs/multi-gpu.md)"));
      }
      const v1::NcclStep::AllGather& ag =
          baseline_.steps(i).nccl().all_gather();
      ASSIGN_OR_RETURN(const auto send, Operand(ag.send(), tensors));
      RETURN_IF_ERROR(gather_->Register(rank_, send.first, send.second));
      ASSIGN_OR_RETURN(const auto recv, Operand(ag.recv(), tensors));
      step.recv = recv.first;
      step.recv_bytes = recv.second;
      steps_.push_back(std::move(step));
      continue;
    }
    if (baseline_.steps(i).step_case() != v1::BaselineStep::kMatmul) {
      return absl::FailedPreconditionError(
          absl::StrCat(what_, " step ", i, " is of no kind this runner runs"));
    }
    step.matmul = std::make_unique<Matmul>();
    uses_lt_ = true;
    // Owned by steps_ at once, so that a failure below frees it.
    Matmul* m = step.matmul.get();
    steps_.push_back(std::move(step));
    RETURN_IF_ERROR(PrepareMatmul(baseline_.steps(i).matmul(), i, tensors, m));
  }
  return absl::OkStatus();
}

absl::Status BaselinePipeline::Run() {
  // A sticky error here is the candidate's, from its run before.
  return Fault(DoRun(), /*keep_sticky=*/true);
}

absl::Status BaselinePipeline::DoRun() {
  for (const Step& step : steps_) RETURN_IF_ERROR(DoRunStep(step));
  return absl::OkStatus();
}

absl::Status BaselinePipeline::RunStep(int i) {
  if (i < 0 || i >= steps()) {
    return absl::InternalError(absl::StrCat("no step ", i, " of ", steps()));
  }
  return Fault(DoRunStep(steps_[i]), /*keep_sticky=*/true);
}

absl::Status BaselinePipeline::RunLocalSteps() {
  for (const Step& step : steps_) {
    if (step.recv == nullptr) RETURN_IF_ERROR(DoRunStep(step));
  }
  return absl::OkStatus();
}

absl::Status BaselinePipeline::DoRunStep(const Step& step) {
  cudaStream_t s = ctx_->stream();
  if (step.recv != nullptr) {
    return gather_->Enqueue(rank_, step.recv, step.recv_bytes, s);
  }
  if (!step.matmul) {
    // The file's launch alone: a baseline's workspaces are not zeroed.
    return bound_->EnqueueLaunch(step.launch);
  }
  const Matmul& m = *step.matmul;
  const float alpha = static_cast<float>(m.layout.alpha), beta = 0.0f;
  return LtCheck(
      cublasLtMatmul(ctx_->cublaslt(), m.op, &alpha, m.a, m.a_desc, m.b,
                     m.b_desc, &beta, m.d, m.d_desc, m.d, m.d_desc, &m.algo,
                     ctx_->lt_workspace(), ctx_->lt_workspace_bytes(), s),
      "running a matmul step");
}

bool BaselinePipeline::HasCollective(const v1::Baseline& baseline) {
  for (const v1::BaselineStep& step : baseline.steps()) {
    if (step.step_case() == v1::BaselineStep::kNccl) return true;
  }
  return false;
}

std::string BaselinePipeline::Name() const {
  if (!HasCollective(baseline_)) return baseline_.name();
  return absl::StrCat(baseline_.name(), " [",
                      gather_ != nullptr ? gather_->Name() : "no collective",
                      "]");
}

const TensorSet::Tensor* BaselinePipeline::Output(const std::string& name) {
  for (const TensorSet::Tensor& t : outputs_) {
    if (t.spec->name() == name) return &t;
  }
  return nullptr;
}

int BaselinePipeline::Launches() {
  if (!launches_) {
    // A collective step is counted by what its collective launches: a
    // capture on one rank alone would wait for the others under NCCL.
    launches_ = CountLaunches(ctx_, [this] { return RunLocalSteps(); });
    for (const Step& step : steps_) {
      if (step.recv != nullptr) launches_->kernels += gather_->Kernels();
    }
  }
  return launches_->kernels + launches_->memsets;
}

int BaselinePipeline::Kernels() {
  Launches();
  return launches_->kernels;
}

int64_t BaselinePipeline::ScratchBytes() const {
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
