// The data parts of a problem whose reference is a golden kernel (issue
// 16): how its inputs are drawn, its baseline's steps, its check cases and
// its byte floor. Every problem file is untrusted input, so each part is
// bounded and checked here, with a message naming the field ("problem
// 'p': baseline.steps[1]: ..."), which the registry turns into a file
// line.
//
// Thread safety: pure functions on values.
#ifndef KBENCH_CONTRACT_PROBLEM_DATA_H_
#define KBENCH_CONTRACT_PROBLEM_DATA_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "contract/expr.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

// Most steps in a baseline, check cases in a problem, and values (inputs
// and outputs together) in one check case.
inline constexpr int kMaxBaselineSteps = 64;
inline constexpr int kMaxCheckCases = 16;
inline constexpr int64_t kMaxCheckCaseValues = int64_t{1} << 16;

// Input distributions, the baseline's steps as far as they can be checked
// without its file's plan, the check cases and min_bytes. Called by
// ValidateProblem, which has checked that the reference is a golden kernel.
absl::Status ValidateProblemData(const v1::Problem& problem);

// The check cases (contract/problem_cases.cc): at most kMaxCheckCases,
// each named once, at dims in the domain, giving every input and output
// (a per-rank input: every shard, in rank order) with the right count of
// finite values, inputs exact in their dtype and integer inputs inside
// their bounds; at most kMaxCheckCaseValues values in all.
absl::Status ValidateCheckCases(const v1::Problem& problem);

// The baseline's steps against the launch plan of its file (null when it
// has none): launch steps take the file's launches in order, each exactly
// once; a matmul's operands are tensors of the problem or workspaces of the
// file, it writes an output or a workspace, never an input, and its
// operands share one element type (fp32, bf16 or fp16).
absl::Status ValidateBaselineSteps(const v1::Problem& problem,
                                   const v1::LaunchPlan* file_plan);
// The same for `baseline`, the problem's baseline or its expert baseline,
// named `what` ("baseline", "expert") in messages.
absl::Status ValidateBaselineSteps(const v1::Problem& problem,
                                   const v1::Baseline& baseline,
                                   absl::string_view what,
                                   const v1::LaunchPlan* file_plan);

// The element type a matmul step computes in: its tensor operands' (one
// type), else its `dtype`.
absl::StatusOr<v1::DType> MatmulDType(const v1::Problem& problem,
                                      const v1::MatmulStep& step);

// Whether `value` is exactly representable in `dtype` (int32: an integer
// in range).
bool ExactIn(v1::DType dtype, double value);

}  // namespace kbench

#endif  // KBENCH_CONTRACT_PROBLEM_DATA_H_
