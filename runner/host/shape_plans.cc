#include "runner/host/shape_plans.h"

#include <utility>

namespace kbench {

absl::StatusOr<const ConcretePlan*> ShapePlans::At(const DimValues& dims) {
  auto it = plans_.find(dims);
  if (it == plans_.end()) {
    absl::StatusOr<ConcretePlan> plan = plan_->Resolve(dims);
    if (plan.ok()) {
      if (absl::Status s = CheckDeviceLimits(*plan, spec_, static_smem_);
          !s.ok()) {
        plan = s;
      }
    }
    it = plans_.emplace(dims, std::move(plan)).first;
  }
  if (!it->second.ok()) return it->second.status();
  return &*it->second;
}

}  // namespace kbench
