// CorrectnessChecker: runs the candidate on every shape of the job's check
// sets, for `trials` fresh seeds each, and compares every output with the
// fp64 golden result. Per trial: seeded random inputs, guard regions armed,
// keyed input checksums, then the candidate twice with the reference's
// eager pipeline in between (outputs poisoned with NaN before each run).
// After each run: guard regions (a write outside a tensor is REJECTED, as
// InvalidArgument "out of bounds ..."), input checksums (REJECTED,
// "modified input ..."), then the golden result, computed on the device
// from those inputs, compared there with the outputs, and scrubbed before
// anything else runs (a candidate never runs beside it, and no output
// travels to the host). The two runs must agree (else FAILED, "the two
// runs ... differed"). On the first trial of each shape, the problem's
// tolerance must reject an all-zero and a constant output (else
// FailedPrecondition: ERROR).
//
// Hidden cases (submit): shape sets marked hidden, and kHiddenExtraTrials
// extra seeds per visible shape, are run as trials marked hidden; their
// progress lines, messages and errors name no shape, dims or seed.
//
// Ownership: borrows everything. Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_CHECK_CORRECTNESS_CHECKER_H_
#define KBENCH_RUNNER_CHECK_CORRECTNESS_CHECKER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/device/candidate_module.h"
#include "runner/host/shape_plans.h"
#include "runner/reference/reference_op.h"

namespace kbench {

using ProgressFn = std::function<void(const std::string&)>;

// Extra hidden seeds per visible shape that a submit job runs.
inline constexpr int kHiddenExtraTrials = 2;

// Seed of one trial, mixed from the job's seed so trials never repeat.
uint64_t TrialSeed(uint64_t job_seed, int set, int shape, int trial);

// Compares every output of `tensors` (or, when `read_from` is given, the
// reference's eager outputs) with `golden`; appends nothing, fills `trial`.
absl::Status CompareOutputs(
    const v1::Problem& problem, const TensorSet& tensors,
    const std::map<std::string, std::vector<double>>& golden,
    cudaStream_t stream, v1::TrialResult* trial,
    ReferenceOp* read_from = nullptr);
// The same for the outputs of `read_from`, an expert baseline.
absl::Status CompareOutputs(
    const v1::Problem& problem, const TensorSet& tensors,
    const std::map<std::string, std::vector<double>>& golden,
    cudaStream_t stream, v1::TrialResult* trial, EagerPipeline* read_from);

class CorrectnessChecker {
 public:
  // `plans` resolves the job's plan at each checked shape (and checks it
  // against the GPU's limits) once; the timing reuses it.
  CorrectnessChecker(DeviceContext* ctx, CandidateModule* module,
                     ReferenceOp* reference, ShapePlans* plans)
      : ctx_(ctx), module_(module), reference_(reference), plans_(plans) {}

  // Fills `report`. A wrong result is not an error status (report.passed is
  // false). Errors: kAborted for a sticky CUDA error (the kernel crashed),
  // InvalidArgument for a launch the GPU refuses or a limit it exceeds.
  absl::Status Run(const v1::RunnerJob& job, const ProgressFn& progress,
                   v1::CorrectnessReport* report);

  // Seeds of the visible trials run, in order (for the manifest).
  const std::vector<uint64_t>& visible_seeds() const { return seeds_; }
  int hidden_trials() const { return hidden_trials_; }

 private:
  // Poisons the outputs, runs the plan once, waits, and checks the guard
  // regions and the input checksums against `sums`. `where` names the case
  // in errors.
  absl::Status RunOnce(BoundPlan* bound, TensorSet* tensors,
                       const std::vector<uint64_t>& sums,
                       const std::string& where, double* ms);

  DeviceContext* ctx_;
  CandidateModule* module_;
  ReferenceOp* reference_;
  ShapePlans* plans_;
  std::vector<uint64_t> seeds_;
  int hidden_trials_ = 0;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_CHECK_CORRECTNESS_CHECKER_H_
