// BaselinePipeline: one baseline of a REFERENCE_OP_GOLDEN_KERNEL problem
// (its `baseline`, what PyTorch eager runs, or its `expert`, what an expert
// runs) as an eager pipeline: the steps in order, the file's launches (its
// workspaces are not zero-filled: a baseline writes before it reads, as
// torch.empty) and cuBLASLt matmuls, writing outputs of its own, which
// start NaN-poisoned as a candidate's do. The job carries the file's cubin,
// compiled for this GPU, and its plan.
//
// Every error is the problem's fault (FailedPrecondition naming the problem
// and the baseline), except a sticky CUDA error, which is left as it is: it
// is the candidate's, from its run before.
//
// Ownership: owns its module, outputs, workspaces and cuBLASLt descriptors;
// borrows the problem, the baseline and the context, which must outlive it.
// Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_REFERENCE_BASELINE_PIPELINE_H_
#define KBENCH_RUNNER_REFERENCE_BASELINE_PIPELINE_H_

#include <cublasLt.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "contract/parsed_plan.h"
#include "kbench/v1/problem.pb.h"
#include "runner/device/candidate_module.h"
#include "runner/host/matmul_layout.h"
#include "runner/reference/collective.h"
#include "runner/reference/lt_util.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class BaselinePipeline : public EagerPipeline {
 public:
  // Which of the problem's baselines, and what the job carries for its
  // file (an empty cubin when the baseline names no file).
  struct Source {
    const v1::Baseline* baseline = nullptr;
    // In messages and field names: "baseline" or "expert".
    std::string what;
    const std::string* cubin = nullptr;
    const v1::LaunchPlan* plan = nullptr;
    // For a problem that spans GPUs, this pipeline's rank and the
    // all-gather its ranks' pipelines share (an `nccl` step runs there);
    // null for a one-GPU problem, whose steps have no collective.
    Collective* gather = nullptr;
    int rank = 0;
  };

  // Loads the file's module and checks the steps against its plan.
  // FailedPrecondition when the job lacks the cubin (kbd's fault) or a plan
  // or module is wrong (the problem's).
  static absl::StatusOr<std::unique_ptr<BaselinePipeline>> Create(
      const v1::Problem& problem, const Source& source, DeviceContext* ctx);
  ~BaselinePipeline() override;

  absl::Status Prepare(const TensorSet& tensors) override;
  absl::Status Run() override;
  const TensorSet::Tensor* Output(const std::string& name) override;
  int Launches() override;
  int Kernels() override;
  // The baseline's name; with a collective step, saying what runs it.
  std::string Name() const override;

  // Whether `baseline` has a collective (`nccl`) step.
  static bool HasCollective(const v1::Baseline& baseline);

  // Its steps one at a time, for a problem that spans GPUs: the caller
  // enqueues a collective step on every rank between the collective's
  // BeginStep and EndStep (after Prepare).
  int steps() const { return static_cast<int>(steps_.size()); }
  bool collective_step(int i) const { return steps_[i].recv != nullptr; }
  absl::Status RunStep(int i);
  int64_t ScratchBytes() const override;

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
  // A step: the file's launch `launch`, `matmul`, or (with `recv` set)
  // the all-gather into `recv`.
  struct Step {
    int launch = -1;
    std::unique_ptr<Matmul> matmul;
    void* recv = nullptr;
    int64_t recv_bytes = 0;
  };

  BaselinePipeline(const v1::Problem& problem, const Source& source,
                   DeviceContext* ctx)
      : problem_(problem),
        baseline_(*source.baseline),
        what_(source.what),
        ctx_(ctx),
        gather_(source.gather),
        rank_(source.rank) {}
  // `s` as the problem's fault; with `keep_sticky`, a sticky CUDA error
  // stays as it is (the candidate's).
  absl::Status Fault(absl::Status s, bool keep_sticky) const;
  absl::Status Load(const Source& source);
  absl::Status DoPrepare(const TensorSet& tensors);
  absl::Status DoRun();
  absl::Status DoRunStep(const Step& step);
  // Runs every step but the collective ones (what a one-rank capture can
  // count: NCCL's part waits for the other ranks).
  absl::Status RunLocalSteps();
  void DestroySteps();
  // The device address of `name`: an output of its own, an input of
  // `tensors`, or a workspace of its file; with its size.
  absl::StatusOr<std::pair<void*, int64_t>> Operand(
      const std::string& name, const TensorSet& tensors) const;
  absl::Status PrepareMatmul(const v1::MatmulStep& step, int index,
                             const TensorSet& tensors, Matmul* m);

  const v1::Problem& problem_;
  const v1::Baseline& baseline_;
  const std::string what_;
  DeviceContext* ctx_;
  Collective* gather_;  // See Source.gather.
  int rank_;
  std::optional<ParsedPlan> plan_;
  std::unique_ptr<CandidateModule> module_;  // Null without a file.

  // Prepared for one shape.
  std::vector<TensorSet::Tensor> outputs_;
  std::unique_ptr<BoundPlan> bound_;
  std::vector<Step> steps_;
  bool uses_lt_ = false;
  std::optional<LaunchCount> launches_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_BASELINE_PIPELINE_H_
