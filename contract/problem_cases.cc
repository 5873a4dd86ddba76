// ValidateCheckCases (declared in contract/problem_data.h): a problem's
// check cases, inputs and outputs computed off-line, which its golden must
// reproduce.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "contract/problem_data.h"
#include "contract/problem_util.h"
#include "contract/problem_util_internal.h"

namespace kbench {

using internal::FieldError;

absl::Status ValidateCheckCases(const v1::Problem& p) {
  if (p.check_cases_size() > kMaxCheckCases) {
    return FieldError(p, "check_cases",
                      absl::StrCat("more than ", kMaxCheckCases));
  }
  std::set<std::string> names;
  for (int i = 0; i < p.check_cases_size(); ++i) {
    const v1::CheckCase& c = p.check_cases(i);
    const std::string field =
        absl::StrCat("check_cases[", i, "] (", c.name(), ")");
    if (c.name().empty() || !names.insert(c.name()).second) {
      return FieldError(p, field, "needs a name of its own");
    }
    v1::Shape shape;
    *shape.mutable_dims() = c.dims();
    absl::StatusOr<DimValues> dims = ShapeDims(p, shape);
    if (!dims.ok()) return FieldError(p, field, dims.status().message());
    int64_t total = 0;
    for (const bool inputs : {true, false}) {
      const auto& given = inputs ? c.inputs() : c.outputs();
      std::map<std::string, const v1::CheckCase::Values*> by_name;
      for (const v1::CheckCase::Values& v : given) {
        const v1::TensorSpec* t = FindTensor(p, v.tensor());
        const bool right_role =
            t != nullptr && (t->role() == v1::TENSOR_ROLE_INPUT) == inputs;
        if (!right_role || !by_name.emplace(v.tensor(), &v).second) {
          return FieldError(p, field,
                            absl::StrCat("'", v.tensor(), "' is not an ",
                                         inputs ? "input" : "output",
                                         " of the problem, or is given twice"));
        }
      }
      for (const v1::TensorSpec& t : p.tensors()) {
        if ((t.role() == v1::TENSOR_ROLE_INPUT) != inputs) continue;
        auto it = by_name.find(t.name());
        if (it == by_name.end()) {
          return FieldError(p, field,
                            absl::StrCat("'", t.name(), "' has no values"));
        }
        absl::StatusOr<int64_t> n = TensorElements(t, *dims);
        if (!n.ok()) return FieldError(p, field, n.status().message());
        // A per-rank input's values are the whole tensor, its shards in
        // rank order: the golden computes from the gathered inputs.
        const int64_t shards = t.placement() == v1::PLACEMENT_PER_RANK
                                   ? std::max(1, p.world_size())
                                   : 1;
        const auto& values = it->second->values();
        if (values.size() != *n * shards) {
          return FieldError(
              p, field,
              absl::StrCat(
                  "'", t.name(), "' has ", values.size(),
                  " values; at these dims it has ", *n * shards, " elements",
                  shards > 1
                      ? absl::StrCat(" (", shards, " shards of ", *n, ")")
                      : ""));
        }
        total += values.size();
        if (total > kMaxCheckCaseValues) {
          return FieldError(p, field,
                            absl::StrCat("more than ", kMaxCheckCaseValues,
                                         " values: a check case is small"));
        }
        for (int j = 0; j < values.size(); ++j) {
          const double v = values[j];
          if (!std::isfinite(v) || (inputs && !ExactIn(t.dtype(), v))) {
            return FieldError(p, field,
                              absl::StrCat("'", t.name(), "'[", j, "] = ", v,
                                           inputs ? " is not exact in "
                                                  : " is not finite in ",
                                           DTypeShortName(t.dtype())));
          }
        }
        if (inputs && t.dtype() == v1::DTYPE_INT32) {
          absl::StatusOr<int64_t> lo = EvalExpr(t.input().int_low(), *dims);
          absl::StatusOr<int64_t> hi = EvalExpr(t.input().int_high(), *dims);
          for (const double v : values) {
            if (!lo.ok() || !hi.ok() || v < *lo || v >= *hi) {
              return FieldError(
                  p, field,
                  absl::StrCat("'", t.name(), "' holds ", v,
                               ", outside its [int_low, int_high)"));
            }
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace kbench
