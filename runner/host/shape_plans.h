// ShapePlans: a job's launch plan resolved at each shape the runner runs it
// on, and checked against this GPU's limits, once per shape. The
// correctness check resolves every checked shape, and the timing runs at a
// shape that is usually among them; both take the resolved plan from here
// instead of resolving and checking it again.
//
// Ownership: borrows the ParsedPlan (which must outlive it); copies the
// spec and the static shared memory. Returned plans live as long as the
// ShapePlans.
// Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_HOST_SHAPE_PLANS_H_
#define KBENCH_RUNNER_HOST_SHAPE_PLANS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "contract/launch_plan.h"
#include "contract/parsed_plan.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

class ShapePlans {
 public:
  // `static_smem` maps entry name to its static shared memory, as
  // CandidateModule::StaticSmem gives it.
  ShapePlans(const ParsedPlan* plan, const v1::GpuSpec& spec,
             std::map<std::string, int64_t> static_smem)
      : plan_(plan), spec_(spec), static_smem_(std::move(static_smem)) {}

  ShapePlans(const ShapePlans&) = delete;
  ShapePlans& operator=(const ShapePlans&) = delete;

  // The plan at `dims`: ParsedPlan::Resolve, then CheckDeviceLimits, with
  // their errors. The first call for some dims does the work; later calls
  // return its result (the same plan, or the same error).
  absl::StatusOr<const ConcretePlan*> At(const DimValues& dims);

  const ParsedPlan& parsed() const { return *plan_; }
  // How many shapes were resolved (distinct dims asked for).
  int resolved() const { return static_cast<int>(plans_.size()); }

 private:
  const ParsedPlan* plan_;
  v1::GpuSpec spec_;
  std::map<std::string, int64_t> static_smem_;
  std::map<DimValues, absl::StatusOr<ConcretePlan>> plans_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_HOST_SHAPE_PLANS_H_
