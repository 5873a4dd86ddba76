// ParsedPlan: a launch plan (contract/launch_plan.h) validated against its
// problem, with every expression parsed once, so that resolving it at a
// shape only evaluates. kbd and the runner resolve a plan at every shape
// they check or time; before, each resolution validated the plan again and
// parsed every expression twice.
//
// Ownership: holds a copy of the plan and its parsed expressions; borrows
// the problem, which must outlive it.
// Thread safety: immutable after Create; Resolve may be called from any
// thread.
#ifndef KBENCH_CONTRACT_PARSED_PLAN_H_
#define KBENCH_CONTRACT_PARSED_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "contract/expr.h"
#include "contract/launch_plan.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

class ParsedPlan {
 public:
  // Validates `plan` against `problem` as ValidateLaunchPlan documents
  // (same errors, same order) and keeps the parsed expressions.
  static absl::StatusOr<ParsedPlan> Create(const v1::LaunchPlan& plan,
                                           const v1::Problem& problem);

  // Evaluates the plan at `dims`. Errors (InvalidArgument) name the line
  // and the shape: an expression that fails (a dim missing from `dims`,
  // overflow, division by zero), a non-positive grid or block extent,
  // negative smem or bytes.
  absl::StatusOr<ConcretePlan> Resolve(const DimValues& dims) const;

  const v1::LaunchPlan& plan() const { return plan_; }
  const v1::Problem& problem() const { return *problem_; }

 private:
  struct Launch {
    std::vector<Expr> grid;   // 1 to 3.
    std::vector<Expr> block;  // 1 to 3.
    std::optional<Expr> smem;
    // Per entry of the launch's args(): the rank expression of a peer()
    // entry, else nullopt.
    std::vector<std::optional<Expr>> peers;
    std::vector<std::string> arg_names;  // Peer entries by their NAME.
  };

  ParsedPlan(const v1::LaunchPlan& plan, const v1::Problem& problem)
      : plan_(plan), problem_(&problem) {}

  v1::LaunchPlan plan_;
  const v1::Problem* problem_;
  std::vector<Expr> workspace_bytes_;  // In plan_.workspaces() order.
  std::vector<Launch> launches_;       // In plan_.launches() order.
};

}  // namespace kbench

#endif  // KBENCH_CONTRACT_PARSED_PLAN_H_
