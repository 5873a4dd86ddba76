// The judging of one trial's outputs, shared by the one-GPU
// CorrectnessChecker and the RankedChecker of problems that span GPUs:
// every output against the golden result under the problem's tolerance,
// the sanity check of the tolerance itself (an all-zero and a constant
// output must fail), and the message of a failed trial.
//
// Thread safety: free functions; the device ones enqueue on `stream` and
// synchronize it.
#ifndef KBENCH_RUNNER_CHECK_TRIAL_JUDGE_H_
#define KBENCH_RUNNER_CHECK_TRIAL_JUDGE_H_

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"
#include "runner/device/tensor_set.h"
#include "runner/host/output_compare.h"
#include "runner/reference/reference_op.h"

namespace kbench {

// What a message withheld at a hidden case advises: the kernel's fault, or
// the problem's.
inline constexpr char kKernelAdvice[] =
    "make every workspace and argument valid for every shape in the "
    "problem's domain";
inline constexpr char kProblemsFault[] =
    "the problem's files are at fault, not the kernel";

// "set/shape (seed S): M of N outputs outside tolerance, ..." for a
// failed visible trial.
std::string TrialFailure(const v1::TrialResult& t);

// Copies the error figures of `from` (not its verdict) into `to`.
void CopyFigures(const v1::TrialResult& from, v1::TrialResult* to);

// Folds one output's figures into `trial`: with several outputs, the
// first failing one is reported (else the first).
void FoldOutput(const v1::TrialResult& one, bool* all_passed,
                v1::TrialResult* trial);

// The figures of one output (nullopt: not compared).
using OutputErrorsFn =
    std::function<absl::StatusOr<std::optional<OutputErrors>>(
        const TensorSet::Tensor&)>;

// Every output of `tensors` judged under the problem's tolerance by the
// figures `errors_of` gives it, folded into `trial`.
absl::Status JudgeOutputs(const v1::Problem& problem, const TensorSet& tensors,
                          const OutputErrorsFn& errors_of,
                          v1::TrialResult* trial);

// Sets the report's trial counts, and passed when every trial (and at
// least one) passed.
void FinishReport(v1::CorrectnessReport* report);

// Internal: the reference produced no golden result for output `t`.
absl::Status NoGolden(const TensorSet::Tensor& t);

// Every output of `tensors` against `golden`, both on the device.
absl::Status CompareOnDevice(const v1::Problem& problem,
                             const TensorSet& tensors,
                             const GoldenBuffers& golden, cudaStream_t stream,
                             v1::TrialResult* trial);

// SanityCheckTolerance on the device, for every output's golden result:
// FailedPrecondition when the problem's tolerance would pass an all-zero
// or a constant output at `where`.
absl::Status SanityOnDevice(const v1::Problem& problem,
                            const GoldenBuffers& golden,
                            const std::string& where, cudaStream_t stream);

}  // namespace kbench

#endif  // KBENCH_RUNNER_CHECK_TRIAL_JUDGE_H_
