// GoldenKernelReference: the reference of a REFERENCE_OP_GOLDEN_KERNEL
// problem, everything about which is data (docs/problems.md):
//  - Golden(): the problem's golden kernel (trusted CUDA, compiled by kbd)
//    run on fp64 copies of the inputs, every output read back in fp64;
//  - the eager pipeline: the problem's baseline, its steps in order: the
//    baseline file's launches (its workspaces are not zero-filled: a
//    baseline writes before it reads, as torch.empty) and cuBLASLt
//    matmuls, writing outputs of its own.
// The job carries both cubins, compiled for this GPU, and their plans.
//
// Ownership: owns its modules, the fp64 view of the problem the golden
// module borrows, the baseline's outputs, workspaces and cuBLASLt
// descriptors; borrows the job (its problem) and the context, which must
// outlive it. Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_REFERENCE_GOLDEN_KERNEL_REFERENCE_H_
#define KBENCH_RUNNER_REFERENCE_GOLDEN_KERNEL_REFERENCE_H_

#include <cublasLt.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contract/parsed_plan.h"
#include "kbench/v1/worker.pb.h"
#include "runner/device/candidate_module.h"
#include "runner/host/matmul_layout.h"
#include "runner/reference/lt_util.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class GoldenKernelReference : public ReferenceOp {
 public:
  // Loads the golden's and the baseline's cubins. FailedPrecondition when
  // the job lacks them (kbd's fault); InvalidArgument when a plan does not
  // fit the problem or a module does not load.
  static absl::StatusOr<std::unique_ptr<GoldenKernelReference>> Create(
      const v1::RunnerJob& job, DeviceContext* ctx);
  ~GoldenKernelReference() override;

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
  // One prepared matmul step: its layout and cuBLASLt state.
  struct Matmul {
    MatmulLayout layout;
    const void* a = nullptr;
    const void* b = nullptr;
    void* d = nullptr;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a_desc = nullptr, b_desc = nullptr, d_desc = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  // A step: the baseline file's launch `launch`, or `matmul`.
  struct Step {
    int launch = -1;
    std::unique_ptr<Matmul> matmul;
  };

  GoldenKernelReference(const v1::RunnerJob& job, DeviceContext* ctx);
  // `s` as the problem's fault (FailedPrecondition naming the problem and
  // `what`): its trusted kernels or data failed, not the candidate. With
  // `keep_sticky`, a sticky CUDA error stays as it is (the candidate's).
  absl::Status Fault(absl::Status s, absl::string_view what,
                     bool keep_sticky) const;
  absl::Status Load(const v1::RunnerJob& job);
  absl::Status RunGolden(const TensorSet& tensors, GoldenBuffers* golden);
  absl::Status Prepare(const TensorSet& tensors);
  absl::Status RunBaseline();
  void DestroySteps();
  // The device address of `name` for the baseline: its own output, an
  // input of `tensors`, or a workspace of its file; with its size.
  absl::StatusOr<std::pair<void*, int64_t>> Operand(
      const std::string& name, const TensorSet& tensors) const;
  absl::Status PrepareMatmul(const v1::MatmulStep& step, int index,
                             const TensorSet& tensors, Matmul* m);

  const v1::Problem& problem_;
  DeviceContext* ctx_;
  // Float tensors as fp64: what the golden's kernels take.
  v1::Problem fp64_problem_;
  std::optional<ParsedPlan> golden_plan_;
  std::unique_ptr<CandidateModule> golden_;
  std::optional<ParsedPlan> baseline_plan_;
  std::unique_ptr<CandidateModule> baseline_;  // Null without a file.

  // The eager pipeline, prepared for one shape.
  std::vector<TensorSet::Tensor> outputs_;
  std::unique_ptr<BoundPlan> bound_;
  std::vector<Step> steps_;
  bool uses_lt_ = false;
  std::optional<LaunchCount> launches_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_GOLDEN_KERNEL_REFERENCE_H_
