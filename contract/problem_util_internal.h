// Helpers shared by contract/problem_util.cc, problem_validate.cc,
// problem_data.cc and problem_cases.cc.
// Not part of the public API: include contract/problem_util.h instead.
//
// Thread safety: pure functions on values; safe to call concurrently.
#ifndef KBENCH_CONTRACT_PROBLEM_UTIL_INTERNAL_H_
#define KBENCH_CONTRACT_PROBLEM_UTIL_INTERNAL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {
namespace internal {

// The problem's dim names in order, joined with ", ": "R, B, H, K".
std::string DimNames(const v1::Problem& problem);

// InvalidArgument "problem 'p': FIELD: WHAT", for a problem file's field.
absl::Status FieldError(const v1::Problem& problem, absl::string_view field,
                        absl::string_view what);

}  // namespace internal
}  // namespace kbench

#endif  // KBENCH_CONTRACT_PROBLEM_UTIL_INTERNAL_H_
