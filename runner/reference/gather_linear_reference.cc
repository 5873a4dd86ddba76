#include "runner/reference/gather_linear_reference.h"

#include <cublas_v2.h>
#include <library_types.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/problem_util.h"
#include "runner/device/cuda_status.h"
#include "runner/device/harness_kernels.h"
#include "runner/reference/lt_util.h"

namespace kbench {
namespace {

int Dim(const DimValues& dims, const char* name) {
  auto it = dims.find(name);
  return it == dims.end() ? 0 : static_cast<int>(it->second);
}

}  // namespace

GatherLinearReference::~GatherLinearReference() { DestroyLt(); }

void GatherLinearReference::DestroyLt() {
  if (op_desc_) cublasLtMatmulDescDestroy(op_desc_);
  if (a_desc_) cublasLtMatrixLayoutDestroy(a_desc_);
  if (b_desc_) cublasLtMatrixLayoutDestroy(b_desc_);
  if (d_desc_) cublasLtMatrixLayoutDestroy(d_desc_);
  op_desc_ = nullptr;
  a_desc_ = b_desc_ = d_desc_ = nullptr;
}

absl::StatusOr<GatherLinearReference::Dims> GatherLinearReference::ReadDims(
    const TensorSet& tensors) const {
  Dims d{Dim(tensors.dims(), "R"), Dim(tensors.dims(), "B"),
         Dim(tensors.dims(), "H"), Dim(tensors.dims(), "K")};
  if (d.R <= 0 || d.B <= 0 || d.H <= 0 || d.K <= 0) {
    return absl::InternalError("gather-linear needs dims R, B, H and K > 0");
  }
  if (!tensors.Find("x") || !tensors.Find("w") || !tensors.Find("bias") ||
      !tensors.Find("out")) {
    return absl::InternalError(
        "gather-linear needs tensors x, w, bias and out");
  }
  return d;
}

absl::Status GatherLinearReference::DeviceGolden(const TensorSet& tensors,
                                                 GoldenBuffers* golden) {
  ASSIGN_OR_RETURN(const Dims d, ReadDims(tensors));
  const TensorSet::Tensor* x = tensors.Find("x");
  const TensorSet::Tensor* w = tensors.Find("w");
  const TensorSet::Tensor* bias = tensors.Find("bias");
  const int64_t rh = int64_t(d.R) * d.H;
  cudaStream_t s = ctx_->stream();
  ASSIGN_OR_RETURN(DeviceBuffer g, DeviceBuffer::Allocate(d.B * rh * 8));
  ASSIGN_OR_RETURN(DeviceBuffer wd, DeviceBuffer::Allocate(d.K * rh * 8));
  ASSIGN_OR_RETURN(DeviceBuffer bd, DeviceBuffer::Allocate(int64_t(d.K) * 8));
  ASSIGN_OR_RETURN(DeviceBuffer od,
                   DeviceBuffer::Allocate(int64_t(d.B) * d.K * 8));
  CUDA_RETURN_IF_ERROR(LaunchGatherToDouble(x->buffer.get(), x->spec->dtype(),
                                            g.as<double>(), d.R, d.B, d.H, s),
                       "gathering x for the golden result");
  CUDA_RETURN_IF_ERROR(LaunchToDouble(w->buffer.get(), w->spec->dtype(),
                                      wd.as<double>(), w->elements, s),
                       "converting w for the golden result");
  CUDA_RETURN_IF_ERROR(LaunchToDouble(bias->buffer.get(), bias->spec->dtype(),
                                      bd.as<double>(), bias->elements, s),
                       "converting bias for the golden result");
  CUDA_RETURN_IF_ERROR(
      LaunchBroadcastRows(bd.as<double>(), od.as<double>(), d.B, d.K, s),
      "broadcasting bias");
  // Row-major out (B,K) is column-major out^T (K,B) = w (K,RH) . g^T (RH,B).
  const double one = 1.0;
  RETURN_IF_ERROR(
      LtCheck(cublasDgemm(ctx_->cublas(), CUBLAS_OP_T, CUBLAS_OP_N, d.K, d.B,
                          rh, &one, wd.as<double>(), rh, g.as<double>(), rh,
                          &one, od.as<double>(), d.K),
              "computing the fp64 golden GEMM"));
  // Scrub the rest: a candidate must not find the operands in freed memory.
  for (DeviceBuffer* b : {&g, &wd, &bd}) {
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(b->get(), 0, b->bytes(), s),
                         "scrubbing golden scratch");
  }
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "computing the golden result");
  golden->Take("out", std::move(od));
  return absl::OkStatus();
}

absl::Status GatherLinearReference::PrepareEager(const TensorSet& tensors) {
  ASSIGN_OR_RETURN(dims_, ReadDims(tensors));
  x_ = tensors.Find("x");
  w_ = tensors.Find("w");
  bias_ = tensors.Find("bias");
  const TensorSet::Tensor* out = tensors.Find("out");
  const v1::DType dtype = x_->spec->dtype();
  ASSIGN_OR_RETURN(const cudaDataType_t type, CudaType(dtype));
  const int64_t rh = int64_t(dims_.R) * dims_.H;
  ASSIGN_OR_RETURN(gathered_,
                   DeviceBuffer::Allocate(dims_.B * rh * DTypeSize(dtype)));
  out_.spec = out->spec;
  out_.extents = out->extents;
  out_.elements = out->elements;
  ASSIGN_OR_RETURN(out_.buffer,
                   DeviceBuffer::Allocate(out_.elements * DTypeSize(dtype)));
  launches_.reset();

  DestroyLt();
  RETURN_IF_ERROR(LtCheck(
      cublasLtMatmulDescCreate(&op_desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
      "creating the matmul descriptor"));
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(op_desc_, CUBLASLT_MATMUL_DESC_TRANSA,
                                 &trans_a, sizeof(trans_a));
  cublasLtMatmulDescSetAttribute(op_desc_, CUBLASLT_MATMUL_DESC_TRANSB,
                                 &trans_b, sizeof(trans_b));
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  cublasLtMatmulDescSetAttribute(op_desc_, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                 &epilogue, sizeof(epilogue));
  const void* bias_ptr = bias_->buffer.get();
  cublasLtMatmulDescSetAttribute(op_desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                 &bias_ptr, sizeof(bias_ptr));
  // A = w viewed column-major (RH x K), transposed; B = gathered (RH x B);
  // D = out^T (K x B).
  RETURN_IF_ERROR(LtCheck(
      cublasLtMatrixLayoutCreate(&a_desc_, type, rh, dims_.K, rh), "layout A"));
  RETURN_IF_ERROR(LtCheck(
      cublasLtMatrixLayoutCreate(&b_desc_, type, rh, dims_.B, rh), "layout B"));
  RETURN_IF_ERROR(LtCheck(
      cublasLtMatrixLayoutCreate(&d_desc_, type, dims_.K, dims_.B, dims_.K),
      "layout D"));
  ASSIGN_OR_RETURN(algo_,
                   ChooseAlgo(ctx_, op_desc_, a_desc_, b_desc_, d_desc_));
  return absl::OkStatus();
}

absl::Status GatherLinearReference::RunEager() {
  cudaStream_t s = ctx_->stream();
  CUDA_RETURN_IF_ERROR(
      LaunchConcatLastDim(x_->buffer.get(), gathered_.get(), x_->spec->dtype(),
                          dims_.R, dims_.B, dims_.H, s),
      "running the reference concat");
  const float alpha = 1.0f, beta = 0.0f;
  return LtCheck(
      cublasLtMatmul(ctx_->cublaslt(), op_desc_, &alpha, w_->buffer.get(),
                     a_desc_, gathered_.get(), b_desc_, &beta,
                     out_.buffer.get(), d_desc_, out_.buffer.get(), d_desc_,
                     &algo_, ctx_->lt_workspace(), ctx_->lt_workspace_bytes(),
                     s),
      "running the reference GEMM");
}

const TensorSet::Tensor* GatherLinearReference::EagerOutput(
    const std::string& name) {
  return name == "out" ? &out_ : nullptr;
}

int GatherLinearReference::EagerLaunches() {
  if (!launches_) {
    launches_ = CountLaunches(ctx_, [this] { return RunEager(); });
  }
  return launches_->kernels + launches_->memsets;
}

int GatherLinearReference::EagerKernels() {
  EagerLaunches();
  return launches_->kernels;
}

int64_t GatherLinearReference::EagerScratchBytes() const {
  // The gathered intermediate and cuBLASLt's workspace (the eager output
  // stands for the problem's output tensor).
  return static_cast<int64_t>(gathered_.bytes() + ctx_->lt_workspace_bytes());
}

std::string GatherLinearReference::EagerName() const {
  return "torch.cat (concat kernel) + cuBLASLt GEMM with bias epilogue";
}

}  // namespace kbench
