// Fuzz target: problem files (kernels/problems/), as kbd's problem
// registry loads them (ProblemRegistry::ParseProblem): protobuf text format
// into v1::Problem with the parser's errors and locations collected,
// example_source and golden.source refused, ValidateProblem, the example's
// and golden's launch plans (the shipped example's source) validated
// against the problem, and the line of the field a message names. A problem
// that validates also goes through the helpers kbd calls with it (shape dims,
// tensor sizes, FLOPs, bytes, prototype, public view, contract text), and the
// launch plan is resolved at every shape. Input: the text of a problem file.
//
// Invariants beyond "no crash, leak or UB": what ValidateProblem promises
// holds for a valid problem (every shape's dims are in the domain, the
// default and check shape sets exist), errors are InvalidArgument, and the
// public view holds no hidden shape set.
#include <cstddef>
#include <cstdint>
#include <string>

#include "contract/contract_text.h"
#include "contract/launch_plan.h"
#include "contract/problem_registry.h"
#include "contract/problem_util.h"
#include "tests/fuzz/fuzz_util.h"

namespace kbench {
namespace {

using fuzz::Fail;

void MustBeInvalidArgument(const absl::Status& status, absl::string_view what) {
  if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument) {
    Fail(std::string(what) + " failed with a code other than InvalidArgument",
         status.ToString());
  }
}

void ExerciseValid(const v1::Problem& problem) {
  if (FindShapeSet(problem, problem.default_shape_set()) == nullptr) {
    Fail("a valid problem lacks its default shape set");
  }
  for (const std::string& name : problem.check_shape_sets()) {
    if (FindShapeSet(problem, name) == nullptr) {
      Fail("a valid problem lacks a check shape set", name);
    }
  }
  (void)EntryPrototype(problem, problem.entry_point());
  (void)KernelContractText(problem);
  const v1::Problem view = PublicView(problem);
  for (const v1::ShapeSet& set : view.shape_sets()) {
    if (set.hidden()) Fail("PublicView kept a hidden shape set", set.name());
  }

  // The example kernel's plan, as ValidateWithExample in the registry.
  absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(fuzz::ExampleKernel());
  if (!plan.ok()) Fail("the shipped example kernel has no plan");
  const absl::Status plan_ok = ValidateLaunchPlan(*plan, problem);
  MustBeInvalidArgument(plan_ok, "ValidateLaunchPlan");

  for (const v1::ShapeSet& set : problem.shape_sets()) {
    for (const v1::Shape& shape : set.shapes()) {
      absl::StatusOr<DimValues> dims = ShapeDims(problem, shape);
      if (!dims.ok()) {
        Fail("ValidateProblem passed a shape ShapeDims refuses",
             dims.status().message());
      }
      if (!CheckDimsInDomain(problem, *dims).ok()) {
        Fail("a shape of a valid problem is outside its domain", shape.name());
      }
      (void)FormatDims(problem, *dims);
      for (const v1::TensorSpec& tensor : problem.tensors()) {
        MustBeInvalidArgument(TensorElements(tensor, *dims).status(),
                              "TensorElements");
        MustBeInvalidArgument(TensorExtents(tensor, *dims).status(),
                              "TensorExtents");
      }
      MustBeInvalidArgument(ProblemFlops(problem, *dims).status(),
                            "ProblemFlops");
      MustBeInvalidArgument(ProblemMinBytes(problem, *dims).status(),
                            "ProblemMinBytes");
      if (plan_ok.ok()) {
        absl::StatusOr<ConcretePlan> resolved =
            ResolveLaunchPlan(*plan, problem, *dims);
        MustBeInvalidArgument(resolved.status(), "ResolveLaunchPlan");
        if (resolved.ok()) {
          MustBeInvalidArgument(CheckDeviceLimits(*resolved, DefaultGpuSpec()),
                                "CheckDeviceLimits");
        }
      }
    }
  }
}

}  // namespace
}  // namespace kbench

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kbench::fuzz::QuietLogs();
  (void)kbench::fuzz::ExampleKernel();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As the registry parses a file, with line numbers for its errors (a
  // validation message names a field, found in the parse's locations);
  // every kernel file it names reads as the shipped example.
  absl::StatusOr<kbench::v1::Problem> problem =
      kbench::ProblemRegistry::ParseProblem(
          std::string(kbench::fuzz::AsText(data, size)), "fuzz.textproto",
          [](const std::string&, const std::string&) {
            return absl::StatusOr<std::string>(kbench::fuzz::ExampleKernel());
          });
  kbench::MustBeInvalidArgument(problem.status(), "ParseProblem");
  if (!problem.ok()) return 0;
  kbench::MustBeInvalidArgument(kbench::ValidateProblem(*problem),
                                "ValidateProblem");
  kbench::ExerciseValid(*problem);
  return 0;
}
