// GatherLinearReference: the reference for REFERENCE_OP_GATHER_LINEAR.
//   gathered = concat(x[0..R-1], last dim)   (B, R*H)
//   out      = gathered . w^T + bias         (B, K)
// Golden: gather and GEMM in fp64 (cublasDgemm, pedantic math).
// Eager: what PyTorch runs for torch.cat + F.linear: a concat kernel, then a
// cuBLASLt GEMM with a bias epilogue in the problem's dtype (fp32 compute,
// no TF32; bf16 operands with fp32 accumulation for bf16).
//
// Ownership and thread safety: see ReferenceOp.
#ifndef KBENCH_RUNNER_REFERENCE_GATHER_LINEAR_REFERENCE_H_
#define KBENCH_RUNNER_REFERENCE_GATHER_LINEAR_REFERENCE_H_

#include <cublasLt.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/reference/lt_util.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class GatherLinearReference : public ReferenceOp {
 public:
  explicit GatherLinearReference(DeviceContext* ctx) : ctx_(ctx) {}
  ~GatherLinearReference() override;

  absl::Status DeviceGolden(const TensorSet& tensors,
                            GoldenBuffers* golden) override;
  absl::Status PrepareEager(const TensorSet& tensors) override;
  absl::Status RunEager() override;
  const TensorSet::Tensor* EagerOutput(const std::string& name) override;
  int EagerLaunches() override;
  int EagerKernels() override;
  std::string EagerName() const override;
  int64_t EagerScratchBytes() const override;

 private:
  struct Dims {
    int R, B, H, K;
  };
  absl::StatusOr<Dims> ReadDims(const TensorSet& tensors) const;
  void DestroyLt();

  DeviceContext* ctx_;

  // Eager pipeline state for the prepared shape.
  Dims dims_{};
  const TensorSet::Tensor* x_ = nullptr;
  const TensorSet::Tensor* w_ = nullptr;
  const TensorSet::Tensor* bias_ = nullptr;
  DeviceBuffer gathered_;
  TensorSet::Tensor out_;
  cublasLtMatmulDesc_t op_desc_ = nullptr;
  cublasLtMatrixLayout_t a_desc_ = nullptr, b_desc_ = nullptr,
                         d_desc_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  std::optional<LaunchCount> launches_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_GATHER_LINEAR_REFERENCE_H_
