#include "runner/reference/reference_op.h"

#include "absl/strings/str_cat.h"
#include "runner/reference/gather_linear_reference.h"

namespace kbench {

absl::StatusOr<std::unique_ptr<ReferenceOp>> MakeReferenceOp(
    const v1::Problem& problem, DeviceContext* ctx) {
  switch (problem.reference()) {
    case v1::REFERENCE_OP_GATHER_LINEAR:
      return std::unique_ptr<ReferenceOp>(
          new GatherLinearReference(problem, ctx));
    default:
      return absl::UnimplementedError(
          absl::StrCat("this runner has no reference for problem '",
                       problem.name(), "' (op ", problem.reference(), ")"));
  }
}

}  // namespace kbench
