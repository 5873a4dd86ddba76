// Helpers shared by contract/launch_plan.cc (entry points, device limits),
// contract/parsed_plan.cc (validation, resolution) and
// contract/launch_plan_parse.cc (ParseLaunchPlan). Not part of the
// public API: include contract/launch_plan.h instead.
//
// Thread safety: free functions on values; safe to call concurrently.
#ifndef KBENCH_CONTRACT_LAUNCH_PLAN_INTERNAL_H_
#define KBENCH_CONTRACT_LAUNCH_PLAN_INTERNAL_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kbench {
namespace internal {

// The launch line that error messages show as an example.
inline constexpr char kExampleLaunch[] =
    "// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)";

// Axis names, for messages ("grid y = ...").
inline constexpr char kAxes[] = "xyz";

// InvalidArgument "line <line>: <what>".
absl::Status LineError(int line, absl::string_view what);

}  // namespace internal
}  // namespace kbench

#endif  // KBENCH_CONTRACT_LAUNCH_PLAN_INTERNAL_H_
