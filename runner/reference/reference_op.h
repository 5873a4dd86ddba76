// ReferenceOp: what a candidate is compared with. Every problem's is its
// golden kernel and baseline, which come with the job as data
// (GoldenKernelReference); the interface keeps the evaluator apart from
// how a reference is built.
//
// Two roles, kept apart on purpose:
//  - DeviceGolden(): the fp64 result that decides correctness;
//  - Eager(): the pipeline a PyTorch user would run, in the problem's
//    dtype, timed exactly like the candidate (its launch count is reported).
//
// Ownership: holds its scratch buffers; borrows the DeviceContext and the
// problem, which must outlive it. Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_REFERENCE_REFERENCE_OP_H_
#define KBENCH_RUNNER_REFERENCE_REFERENCE_OP_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/device/device_context.h"
#include "runner/device/tensor_set.h"
#include "runner/reference/golden_buffers.h"

namespace kbench {

// A pipeline timed beside the candidate: what a PyTorch user or an expert
// runs, in the problem's dtype, writing outputs of its own. A problem's
// baseline (ReferenceOp::Eager) and expert baseline (ReferenceOp::Expert)
// are each one.
class EagerPipeline {
 public:
  virtual ~EagerPipeline() = default;
  // Prepares for the shape of `tensors` (outputs, workspaces, cuBLASLt
  // algorithm choice); the pipeline reads the inputs of `tensors`.
  virtual absl::Status Prepare(const TensorSet& tensors) = 0;
  // Enqueues one run on the context's stream; no sync.
  virtual absl::Status Run() = 0;
  // Its output buffer for `name` (valid after Prepare), to check it
  // against the golden result.
  virtual const TensorSet::Tensor* Output(const std::string& name) = 0;
  // Kernels and memsets one Run launches, counted by capturing it into a
  // CUDA graph; of those, the kernels (what CUPTI's records of a run hold).
  virtual int Launches() = 0;
  virtual int Kernels() = 0;
  // One line saying what it is.
  virtual std::string Name() const = 0;
  // Device memory it allocates beyond the problem's tensors, after Prepare.
  virtual int64_t ScratchBytes() const = 0;
};

class ReferenceOp {
 public:
  virtual ~ReferenceOp() = default;

  // Computes every output of the problem in fp64 on the device from the
  // inputs in `tensors`, into `golden` (which the caller scrubs before a
  // candidate runs again). Returns with the work done (the context's
  // stream synchronized); other scratch is zeroed before returning.
  virtual absl::Status DeviceGolden(const TensorSet& tensors,
                                    GoldenBuffers* golden) = 0;
  // DeviceGolden, copied to the host keyed by output name and scrubbed
  // from the device before returning, so a candidate launched later cannot
  // find it. For small shapes: large ones are compared on the device.
  absl::Status Golden(const TensorSet& tensors,
                      std::map<std::string, std::vector<double>>* golden);

  // The pipeline a PyTorch user would run (the problem's baseline), timed
  // like the candidate and checked against the golden result. Never null;
  // owned by this.
  virtual EagerPipeline* Eager() = 0;
  // The problem's expert baseline, timed beside the eager pipeline; null
  // when the problem declares none. Owned by this.
  virtual EagerPipeline* Expert() { return nullptr; }
};

// The reference of `job`'s problem: it loads the golden, baseline and expert
// cubins the job carries; Unimplemented for a problem whose reference is not
// a golden kernel. `job` must outlive it.
absl::StatusOr<std::unique_ptr<ReferenceOp>> MakeReferenceOp(
    const v1::RunnerJob& job, DeviceContext* ctx);

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_REFERENCE_OP_H_
