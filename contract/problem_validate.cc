// ValidateProblem (declared in contract/problem_util.h): the full check of a
// problem as loaded from a file, one Check* function per part.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"
#include "contract/expr.h"
#include "contract/holdout.h"
#include "contract/problem_data.h"
#include "contract/problem_util.h"
#include "contract/problem_util_internal.h"

namespace kbench {
namespace {

// The largest Tolerance.norm_floor a problem may set.
constexpr double kMaxNormFloor = 1e3;
// The largest dim value (kernels get dims as int), and how many dims,
// tensors, shape sets and shapes per set a problem may have: every shape
// is checked against every tensor at load.
constexpr int64_t kMaxDimValue = std::numeric_limits<int32_t>::max();
constexpr int kMaxDims = 16;
constexpr int kMaxTensors = 32;
constexpr int kMaxShapeSets = 32;
constexpr int kMaxShapesPerSet = 64;

using internal::DimNames;

// Builds InvalidArgument errors prefixed with the problem's name.
class Checker {
 public:
  explicit Checker(const v1::Problem& problem) : problem_(problem) {}

  absl::Status Error(absl::string_view field, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("problem '", problem_.name(), "': ", field, ": ", what));
  }

  // Parses `text` and checks it uses only the problem's dims.
  absl::Status CheckExpr(absl::string_view field,
                         absl::string_view text) const {
    if (text.empty()) return Error(field, "the expression is empty");
    absl::StatusOr<Expr> expr = Expr::Parse(text);
    if (!expr.ok()) return Error(field, expr.status().message());
    for (const std::string& name : expr->Names()) {
      if (!IsDim(problem_, name)) {
        return Error(field, absl::StrCat("'", text, "' uses '", name,
                                         "', which is not a dim; dims are ",
                                         DimNames(problem_)));
      }
    }
    return absl::OkStatus();
  }

 private:
  const v1::Problem& problem_;
};

absl::Status CheckDims(const v1::Problem& problem, const Checker& check) {
  if (problem.dims().empty()) {
    return check.Error("dims", "a problem needs at least one dim");
  }
  if (problem.dims_size() > kMaxDims) {
    return check.Error("dims", absl::StrCat("more than ", kMaxDims));
  }
  std::set<std::string> seen;
  for (int i = 0; i < problem.dims_size(); ++i) {
    const v1::DimSpec& dim = problem.dims(i);
    const std::string field = absl::StrCat("dims[", i, "] (", dim.name(), ")");
    if (!IsIdentifier(dim.name())) {
      return check.Error(field,
                         "name must be an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    }
    if (!seen.insert(dim.name()).second) {
      return check.Error(field, "duplicate dim name");
    }
    if (dim.min() < 1) {
      return check.Error(field,
                         absl::StrCat("min ", dim.min(), " must be >= 1"));
    }
    if (dim.max() < dim.min()) {
      return check.Error(field, absl::StrCat("max ", dim.max(),
                                             " must be >= min ", dim.min()));
    }
    // Kernels get dims as int.
    if (dim.max() > kMaxDimValue) {
      return check.Error(
          field, absl::StrCat("max ", dim.max(), " is over ", kMaxDimValue,
                              " (kernels get dims as int)"));
    }
    if (dim.multiple_of() > kMaxDimValue) {
      return check.Error(field, absl::StrCat("multiple_of ", dim.multiple_of(),
                                             " is over ", kMaxDimValue));
    }
    if (dim.multiple_of() < 0) {
      return check.Error(field, absl::StrCat("multiple_of ", dim.multiple_of(),
                                             " must be >= 0"));
    }
    if (dim.multiple_of() > 1) {
      const int64_t m = dim.multiple_of();
      const int64_t first = (dim.min() + m - 1) / m * m;
      if (first > dim.max()) {
        return check.Error(
            field, absl::StrCat("no multiple of ", m, " lies in [", dim.min(),
                                ", ", dim.max(), "]"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTensors(const v1::Problem& problem, const Checker& check) {
  if (problem.tensors().empty()) {
    return check.Error("tensors", "a problem needs at least one tensor");
  }
  if (problem.tensors_size() > kMaxTensors) {
    return check.Error("tensors", absl::StrCat("more than ", kMaxTensors));
  }
  std::set<std::string> seen;
  bool has_output = false;
  for (int i = 0; i < problem.tensors_size(); ++i) {
    const v1::TensorSpec& tensor = problem.tensors(i);
    const std::string field =
        absl::StrCat("tensors[", i, "] (", tensor.name(), ")");
    if (!IsIdentifier(tensor.name())) {
      return check.Error(field,
                         "name must be an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    }
    if (!seen.insert(tensor.name()).second) {
      return check.Error(field, "duplicate tensor name");
    }
    if (IsDim(problem, tensor.name())) {
      return check.Error(field, "the name is also a dim's name");
    }
    if (tensor.role() != v1::TENSOR_ROLE_INPUT &&
        tensor.role() != v1::TENSOR_ROLE_OUTPUT) {
      return check.Error(
          field, "role must be TENSOR_ROLE_INPUT or TENSOR_ROLE_OUTPUT");
    }
    has_output |= tensor.role() == v1::TENSOR_ROLE_OUTPUT;
    if (DTypeSize(tensor.dtype()) == 0) {
      return check.Error(field,
                         "dtype must be DTYPE_FP32, DTYPE_BF16, DTYPE_FP16, "
                         "DTYPE_FP64 or DTYPE_INT32");
    }
    if (tensor.shape().empty()) {
      return check.Error(field, "shape needs at least one extent");
    }
    for (int j = 0; j < tensor.shape_size(); ++j) {
      RETURN_IF_ERROR(check.CheckExpr(absl::StrCat(field, ".shape[", j, "]"),
                                      tensor.shape(j)));
    }
  }
  if (!has_output) {
    return check.Error("tensors", "no tensor has role TENSOR_ROLE_OUTPUT");
  }
  return absl::OkStatus();
}

// A problem that spans GPUs (docs/multi-gpu.md): its world size, and where
// each tensor lives. `rank` and `world_size` are reserved in every problem:
// a multi-rank launch passes them to each rank.
absl::Status CheckWorldSize(const v1::Problem& problem, const Checker& check) {
  for (const char* reserved : {"rank", "world_size"}) {
    if (IsDim(problem, reserved) || FindTensor(problem, reserved) != nullptr) {
      return check.Error(reserved,
                         absl::StrCat("'", reserved,
                                      "' is a reserved name (each rank of a "
                                      "problem that spans GPUs is given it); "
                                      "name the dim or tensor otherwise"));
    }
  }
  const int world_size = problem.world_size();
  if (world_size < 0 || world_size > kMaxWorldSize) {
    return check.Error(
        "world_size", absl::StrCat(world_size,
                                   " is out of range: 0 or 1 for one GPU, or 2 "
                                   "to ",
                                   kMaxWorldSize, " for the GPUs of one host"));
  }
  for (int i = 0; i < problem.tensors_size(); ++i) {
    const v1::TensorSpec& t = problem.tensors(i);
    const std::string field =
        absl::StrCat("tensors[", i, "] (", t.name(), ").placement");
    const v1::Placement placement = t.placement();
    if (world_size <= 1) {
      if (placement != v1::PLACEMENT_UNSPECIFIED) {
        return check.Error(field,
                           "placement is only for a problem that spans GPUs "
                           "(world_size 2 or more); leave it out");
      }
      continue;
    }
    if (placement != v1::PLACEMENT_PER_RANK &&
        placement != v1::PLACEMENT_REPLICATED &&
        placement != v1::PLACEMENT_RANK0) {
      return check.Error(
          field, absl::StrCat("the problem spans ", world_size,
                              " GPUs, so each tensor says where it lives: "
                              "PLACEMENT_PER_RANK (shard r on GPU r), "
                              "PLACEMENT_REPLICATED or PLACEMENT_RANK0"));
    }
    if (placement == v1::PLACEMENT_PER_RANK &&
        t.role() != v1::TENSOR_ROLE_INPUT) {
      return check.Error(field,
                         "PLACEMENT_PER_RANK is for inputs; an output is "
                         "PLACEMENT_REPLICATED (every rank writes the whole "
                         "output) or PLACEMENT_RANK0");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSignature(const v1::Problem& problem, const Checker& check) {
  std::map<std::string, int> count;
  for (const std::string& name : problem.signature()) {
    if (FindTensor(problem, name) == nullptr && !IsDim(problem, name)) {
      return check.Error(
          "signature",
          absl::StrCat("'", name, "' is neither a tensor nor a dim"));
    }
    if (++count[name] > 1) {
      return check.Error("signature",
                         absl::StrCat("'", name, "' appears more than once"));
    }
  }
  for (const v1::TensorSpec& tensor : problem.tensors()) {
    if (count[tensor.name()] == 0) {
      return check.Error(
          "signature", absl::StrCat("tensor '", tensor.name(), "' is missing"));
    }
  }
  for (const v1::DimSpec& dim : problem.dims()) {
    if (count[dim.name()] == 0) {
      return check.Error("signature",
                         absl::StrCat("dim '", dim.name(), "' is missing"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckShapeSets(const v1::Problem& problem, const Checker& check) {
  if (problem.shape_sets().empty()) {
    return check.Error("shape_sets", "a problem needs at least one shape set");
  }
  if (problem.shape_sets_size() > kMaxShapeSets) {
    return check.Error("shape_sets", absl::StrCat("more than ", kMaxShapeSets));
  }
  std::set<std::string> set_names;
  for (int i = 0; i < problem.shape_sets_size(); ++i) {
    const v1::ShapeSet& set = problem.shape_sets(i);
    const std::string field =
        absl::StrCat("shape_sets[", i, "] (", set.name(), ")");
    if (set.name().empty()) return check.Error(field, "name is empty");
    if (set.name() == kRandomShapeSet ||
        absl::StartsWith(set.name(), kHoldoutSetPrefix)) {
      return check.Error(field,
                         absl::StrCat("the names '", kRandomShapeSet, "' and '",
                                      kHoldoutSetPrefix,
                                      "...' are kept for the sets kbd draws "
                                      "from holdout_classes"));
    }
    if (!set_names.insert(set.name()).second) {
      return check.Error(field, "duplicate shape set name");
    }
    if (set.shapes().empty()) return check.Error(field, "has no shapes");
    if (set.shapes_size() > kMaxShapesPerSet) {
      return check.Error(
          field, absl::StrCat("more than ", kMaxShapesPerSet, " shapes"));
    }
    if (set.time_budget_ms() < 0) {
      return check.Error(field, "time_budget_ms must be >= 0");
    }
    std::set<std::string> shape_names;
    for (int j = 0; j < set.shapes_size(); ++j) {
      const v1::Shape& shape = set.shapes(j);
      const std::string shape_field =
          absl::StrCat(field, ".shapes[", j, "] (", shape.name(), ")");
      if (shape.name().empty()) {
        return check.Error(shape_field, "name is empty");
      }
      if (!shape_names.insert(shape.name()).second) {
        return check.Error(shape_field, "duplicate shape name in the set");
      }
      absl::StatusOr<DimValues> dims = ShapeDims(problem, shape);
      if (!dims.ok()) return check.Error(shape_field, dims.status().message());
      if (absl::Status s = CheckShapeFigures(problem, *dims); !s.ok()) {
        return check.Error(shape_field, s.message());
      }
    }
  }
  const v1::ShapeSet* def = FindShapeSet(problem, problem.default_shape_set());
  if (problem.default_shape_set().empty() || def == nullptr) {
    return check.Error(
        "default_shape_set",
        absl::StrCat("'", problem.default_shape_set(),
                     "' is not one of the problem's shape sets"));
  }
  if (def->hidden()) {
    return check.Error("default_shape_set",
                       absl::StrCat("'", def->name(), "' is hidden"));
  }
  for (const std::string& name : problem.check_shape_sets()) {
    const v1::ShapeSet* set = FindShapeSet(problem, name);
    if (set == nullptr) {
      return check.Error("check_shape_sets",
                         absl::StrCat("'", name,
                                      "' is not one of the problem's shape "
                                      "sets"));
    }
    if (set->hidden()) {
      return check.Error("check_shape_sets",
                         absl::StrCat("'", name, "' is hidden"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTolerance(const v1::Problem& problem, const Checker& check) {
  if (!problem.has_tolerance()) {
    return check.Error("tolerance", "is missing");
  }
  const v1::Tolerance& tol = problem.tolerance();
  const std::pair<const char*, double> fields[] = {
      {"tolerance.atol", tol.atol()},
      {"tolerance.rtol", tol.rtol()},
      {"tolerance.max_rel_norm", tol.max_rel_norm()}};
  for (const auto& [field, value] : fields) {
    if (!(value > 0) || !std::isfinite(value)) {
      return check.Error(field, absl::StrCat(value,
                                             " must be positive and "
                                             "finite"));
    }
  }
  // Bounded: a huge floor would switch the norm test off (and its square
  // times n would overflow).
  if (!(tol.norm_floor() >= 0 && tol.norm_floor() <= kMaxNormFloor)) {
    return check.Error(
        "tolerance.norm_floor",
        absl::StrCat(tol.norm_floor(), " must be 0 (no floor) up to ",
                     kMaxNormFloor, " (an output RMS)"));
  }
  return absl::OkStatus();
}

// At most this many suites per problem.
constexpr int kMaxSuites = 16;

absl::Status CheckSuites(const v1::Problem& problem, const Checker& check) {
  if (problem.suites_size() > kMaxSuites) {
    return check.Error("suites", absl::StrCat("more than ", kMaxSuites));
  }
  std::set<std::string> seen;
  for (int i = 0; i < problem.suites_size(); ++i) {
    const std::string& suite = problem.suites(i);
    const std::string field = absl::StrCat("suites[", i, "]");
    if (!IsIdentifier(suite) || suite.size() > 64) {
      return check.Error(field,
                         absl::StrCat("'", suite,
                                      "' is not an identifier of at most 64 "
                                      "characters ([A-Za-z_][A-Za-z0-9_]*)"));
    }
    if (!seen.insert(suite).second) {
      return check.Error(field, absl::StrCat("'", suite, "' twice"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateProblem(const v1::Problem& problem) {
  Checker check(problem);
  if (problem.name().empty()) {
    return absl::InvalidArgumentError("problem: name is empty");
  }
  for (char c : problem.name()) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
        c != '.') {
      return check.Error("name",
                         "may contain only letters, digits, '_', '-' and '.'");
    }
  }
  // Requests name a problem by the id rule (at most 128 bytes), and it is
  // never a path component.
  if (absl::Status s = ValidateSessionId(problem.name(), "name", ""); !s.ok()) {
    return check.Error("name", s.message());
  }
  if (problem.name()[0] == '.') {
    return check.Error("name", "must not start with '.'");
  }
  if (!IsIdentifier(problem.entry_point())) {
    return check.Error("entry_point", absl::StrCat("'", problem.entry_point(),
                                                   "' is not a C identifier"));
  }
  // Every reference is data (docs/problems.md): a golden kernel and a
  // baseline plan.
  if (problem.reference() != v1::REFERENCE_OP_GOLDEN_KERNEL) {
    return check.Error("reference",
                       "must be REFERENCE_OP_GOLDEN_KERNEL, with golden { "
                       "file: \"golden.cu\" } and a baseline (see "
                       "docs/problems.md)");
  }
  if (problem.golden().file().empty()) {
    return check.Error("golden",
                       "REFERENCE_OP_GOLDEN_KERNEL needs golden { file: "
                       "\"golden.cu\" }, its CUDA source");
  }
  RETURN_IF_ERROR(CheckSuites(problem, check));
  RETURN_IF_ERROR(CheckDims(problem, check));
  RETURN_IF_ERROR(CheckTensors(problem, check));
  RETURN_IF_ERROR(CheckWorldSize(problem, check));
  RETURN_IF_ERROR(CheckSignature(problem, check));
  // The formula's syntax first: CheckShapeSets evaluates it at each shape.
  RETURN_IF_ERROR(check.CheckExpr("flops", problem.flops()));
  RETURN_IF_ERROR(CheckShapeSets(problem, check));
  RETURN_IF_ERROR(CheckTolerance(problem, check));
  if (problem.time_budget_ms() <= 0) {
    return check.Error("time_budget_ms", "must be positive");
  }
  if (problem.trials() <= 0) return check.Error("trials", "must be positive");
  RETURN_IF_ERROR(ValidateProblemData(problem));
  return ValidateHoldoutClasses(problem);
}

}  // namespace kbench
