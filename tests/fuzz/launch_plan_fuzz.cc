// Fuzz target: the launch plan a kernel declares in its `// @kb` lines
// (ParseLaunchPlan), which kbd reads from every untrusted source before it
// compiles it. A plan that parses is validated against each shipped
// problem; one that validates is resolved at every shape of the problem and
// checked against the default GPU limits and the entry points, as
// job_service does. The input is the whole kernel source.
//
// Invariants beyond "no crash, leak or UB": errors are InvalidArgument with
// a message; a plan that validates resolves without overflow-induced UB.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "contract/launch_plan.h"
#include "contract/problem_util.h"
#include "tests/fuzz/fuzz_util.h"

namespace kbench {
namespace {

void CheckError(const absl::Status& status, absl::string_view where) {
  if (status.ok()) return;
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    fuzz::Fail("a launch plan error is not InvalidArgument", status.ToString());
  }
  if (status.message().empty()) fuzz::Fail("empty error message", where);
}

void Exercise(const v1::LaunchPlan& plan, const v1::Problem& problem) {
  absl::Status valid = ValidateLaunchPlan(plan, problem);
  CheckError(valid, "ValidateLaunchPlan");
  if (!valid.ok()) return;
  CheckError(CheckEntryPoints(plan, {problem.entry_point(),
                                     "_Z13gather_linearPKfS0_S0_Pfiiii"}),
             "CheckEntryPoints");
  const v1::GpuSpec spec = DefaultGpuSpec();
  for (const v1::ShapeSet& set : problem.shape_sets()) {
    for (const v1::Shape& shape : set.shapes()) {
      absl::StatusOr<DimValues> dims = ShapeDims(problem, shape);
      if (!dims.ok()) fuzz::Fail("a shipped shape has no dims", shape.name());
      absl::StatusOr<ConcretePlan> resolved =
          ResolveLaunchPlan(plan, problem, *dims);
      CheckError(resolved.status(), "ResolveLaunchPlan");
      if (!resolved.ok()) continue;
      if (resolved->launches.size() !=
          static_cast<size_t>(plan.launches_size())) {
        fuzz::Fail("ResolveLaunchPlan lost or added launches");
      }
      for (const ConcreteLaunch& l : resolved->launches) {
        if (l.args.empty()) fuzz::Fail("a resolved launch has no args");
      }
      CheckError(CheckDeviceLimits(*resolved, spec, {{"gather_linear", 1024}}),
                 "CheckDeviceLimits");
    }
  }
}

}  // namespace
}  // namespace kbench

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kbench::fuzz::QuietLogs();
  (void)kbench::fuzz::ShippedProblems();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<kbench::v1::LaunchPlan> plan =
      kbench::ParseLaunchPlan(kbench::fuzz::AsText(data, size));
  kbench::CheckError(plan.status(), "ParseLaunchPlan");
  if (!plan.ok()) return 0;
  for (const kbench::v1::Problem& problem : kbench::fuzz::ShippedProblems()) {
    kbench::Exercise(*plan, problem);
  }
  return 0;
}
