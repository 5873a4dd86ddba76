// A helper shared by contract/problem_util.cc and contract/problem_validate.cc.
// Not part of the public API: include contract/problem_util.h instead.
//
// Thread safety: pure functions on values; safe to call concurrently.
#ifndef KBENCH_CONTRACT_PROBLEM_UTIL_INTERNAL_H_
#define KBENCH_CONTRACT_PROBLEM_UTIL_INTERNAL_H_

#include <string>

#include "kbench/v1/problem.pb.h"

namespace kbench {
namespace internal {

// The problem's dim names in order, joined with ", ": "R, B, H, K".
std::string DimNames(const v1::Problem& problem);

}  // namespace internal
}  // namespace kbench

#endif  // KBENCH_CONTRACT_PROBLEM_UTIL_INTERNAL_H_
