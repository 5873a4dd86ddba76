// GoldenKernelReference: the reference of a REFERENCE_OP_GOLDEN_KERNEL
// problem, everything about which is data (docs/problems.md):
//  - Golden(): the problem's golden kernel (trusted CUDA, compiled by kbd)
//    run on fp64 copies of the inputs, every output read back in fp64;
//  - the eager pipeline: the problem's baseline (BaselinePipeline), and
//    its expert baseline when it declares one (Expert()).
// The job carries the cubins, compiled for this GPU, and their plans.
//
// Ownership: owns its golden module, the fp64 view of the problem that
// module borrows, and the baselines; borrows the job (its problem) and the
// context, which must outlive it. Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_REFERENCE_GOLDEN_KERNEL_REFERENCE_H_
#define KBENCH_RUNNER_REFERENCE_GOLDEN_KERNEL_REFERENCE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contract/parsed_plan.h"
#include "kbench/v1/worker.pb.h"
#include "runner/device/candidate_module.h"
#include "runner/reference/baseline_pipeline.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class GoldenKernelReference : public ReferenceOp {
 public:
  // Loads the golden's and the baseline's cubins. FailedPrecondition when
  // the job lacks them (kbd's fault); InvalidArgument when a plan does not
  // fit the problem or a module does not load.
  // With `baselines` false only the golden is loaded and Eager() is null:
  // the check of a problem that spans GPUs (RankedChecker), whose
  // baseline's NCCL step the one-GPU pipeline cannot run.
  static absl::StatusOr<std::unique_ptr<GoldenKernelReference>> Create(
      const v1::RunnerJob& job, DeviceContext* ctx, bool baselines = true);
  ~GoldenKernelReference() override;

  absl::Status DeviceGolden(const TensorSet& tensors,
                            GoldenBuffers* golden) override;
  EagerPipeline* Eager() override { return baseline_.get(); }
  EagerPipeline* Expert() override { return expert_.get(); }

 private:
  GoldenKernelReference(const v1::RunnerJob& job, DeviceContext* ctx);
  // `s` as the problem's fault (FailedPrecondition naming the problem and
  // `what`): its trusted kernels or data failed, not the candidate.
  absl::Status Fault(absl::Status s, absl::string_view what) const;
  absl::Status Load(const v1::RunnerJob& job, bool baselines);
  absl::Status RunGolden(const TensorSet& tensors, GoldenBuffers* golden);

  const v1::Problem& problem_;
  DeviceContext* ctx_;
  // Float tensors as fp64: what the golden's kernels take.
  v1::Problem fp64_problem_;
  std::optional<ParsedPlan> golden_plan_;
  std::unique_ptr<CandidateModule> golden_;
  std::unique_ptr<BaselinePipeline> baseline_;
  std::unique_ptr<BaselinePipeline> expert_;  // Null without one.
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_GOLDEN_KERNEL_REFERENCE_H_
