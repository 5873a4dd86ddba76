#include "contract/problem_util.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "contract/problem_util_internal.h"

namespace kbench {
namespace internal {

std::string DimNames(const v1::Problem& problem) {
  std::vector<std::string> names;
  for (const v1::DimSpec& dim : problem.dims()) names.push_back(dim.name());
  return absl::StrJoin(names, ", ");
}

absl::Status FieldError(const v1::Problem& problem, absl::string_view field,
                        absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("problem '", problem.name(), "': ", field, ": ", what));
}

}  // namespace internal

namespace {

using internal::DimNames;

}  // namespace

int DTypeSize(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_FP32:
      return 4;
    case v1::DTYPE_BF16:
    case v1::DTYPE_FP16:
      return 2;
    case v1::DTYPE_FP64:
      return 8;
    case v1::DTYPE_INT32:
      return 4;
    default:
      return 0;
  }
}

std::string DTypeCName(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_FP32:
      return "float";
    case v1::DTYPE_BF16:
      return "__nv_bfloat16";
    case v1::DTYPE_FP16:
      return "__half";
    case v1::DTYPE_FP64:
      return "double";
    case v1::DTYPE_INT32:
      return "int";
    default:
      return "void";
  }
}

std::string DTypeShortName(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_FP32:
      return "fp32";
    case v1::DTYPE_BF16:
      return "bf16";
    case v1::DTYPE_FP16:
      return "fp16";
    case v1::DTYPE_FP64:
      return "fp64";
    case v1::DTYPE_INT32:
      return "int32";
    default:
      return "unspecified";
  }
}

absl::StatusOr<DimValues> ShapeDims(const v1::Problem& problem,
                                    const v1::Shape& shape) {
  DimValues dims(shape.dims().begin(), shape.dims().end());
  RETURN_IF_ERROR(CheckDimsInDomain(problem, dims));
  return dims;
}

absl::Status CheckDimsInDomain(const v1::Problem& problem,
                               const DimValues& dims) {
  for (const auto& [name, value] : dims) {
    if (!IsDim(problem, name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", name, "' is not a dim of ", problem.name(),
                       "; dims are ", DimNames(problem)));
    }
  }
  for (const v1::DimSpec& dim : problem.dims()) {
    auto it = dims.find(dim.name());
    if (it == dims.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("dim '", dim.name(), "' has no value; ", problem.name(),
                       " needs a value for each of ", DimNames(problem)));
    }
    const int64_t v = it->second;
    if (v < dim.min() || v > dim.max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          dim.name(), "=", v, " is outside the domain of ", problem.name(),
          ": ", dim.name(), " must be in [", dim.min(), ", ", dim.max(), "]"));
    }
    if (dim.multiple_of() > 1 && v % dim.multiple_of() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          dim.name(), "=", v, " is outside the domain of ", problem.name(),
          ": ", dim.name(), " must be a multiple of ", dim.multiple_of()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> TensorExtents(const v1::TensorSpec& tensor,
                                                   const DimValues& dims) {
  std::vector<int64_t> extents;
  for (const std::string& text : tensor.shape()) {
    ASSIGN_OR_RETURN(int64_t extent, EvalExpr(text, dims));
    if (extent < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("extent '", text, "' of tensor '", tensor.name(),
                       "' is negative (", extent, ")"));
    }
    extents.push_back(extent);
  }
  return extents;
}

absl::StatusOr<int64_t> TensorElements(const v1::TensorSpec& tensor,
                                       const DimValues& dims) {
  ASSIGN_OR_RETURN(std::vector<int64_t> extents, TensorExtents(tensor, dims));
  int64_t n = 1;
  for (int64_t extent : extents) {
    if (__builtin_mul_overflow(n, extent, &n)) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", tensor.name(),
                       "' has more elements than fit in 64 bits"));
    }
  }
  // Its bytes must fit too: the runner allocates elements * size, which
  // would otherwise wrap to a small buffer that the fill overruns.
  const int64_t size = std::max<int64_t>(DTypeSize(tensor.dtype()), 1);
  if (n > kMaxTensorBytes / size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", tensor.name(), "' would have ", n, " elements of ", size,
        " bytes, over the ", kMaxTensorBytes, " bytes a tensor may hold"));
  }
  return n;
}

absl::Status CheckShapeFigures(const v1::Problem& problem,
                               const DimValues& dims) {
  for (const v1::TensorSpec& tensor : problem.tensors()) {
    RETURN_IF_ERROR(TensorElements(tensor, dims).status());
  }
  const std::pair<const char*, const std::string*> formulas[] = {
      {"flops", &problem.flops()}, {"min_bytes", &problem.min_bytes()}};
  for (const auto& [field, text] : formulas) {
    if (text->empty()) continue;
    absl::StatusOr<int64_t> v = EvalExpr(*text, dims);
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " '", *text, "': ", v.status().message()));
    }
    if (*v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " '", *text, "' is ", *v, ", below 0"));
    }
  }
  return absl::OkStatus();
}

const v1::TensorSpec* FindTensor(const v1::Problem& problem,
                                 const std::string& name) {
  for (const v1::TensorSpec& tensor : problem.tensors()) {
    if (tensor.name() == name) return &tensor;
  }
  return nullptr;
}

const v1::ShapeSet* FindShapeSet(const v1::Problem& problem,
                                 const std::string& name) {
  for (const v1::ShapeSet& set : problem.shape_sets()) {
    if (set.name() == name) return &set;
  }
  return nullptr;
}

bool SpansGpus(const v1::Problem& problem) { return problem.world_size() >= 2; }

bool IsLaunchDim(const v1::Problem& problem, const std::string& name) {
  return IsDim(problem, name) ||
         (SpansGpus(problem) && (name == kRankDim || name == kWorldSizeDim));
}

DimValues RankDims(const DimValues& dims, int rank, int world_size) {
  DimValues out = dims;
  out[kRankDim] = rank;
  out[kWorldSizeDim] = world_size;
  return out;
}

v1::Problem GatheredProblem(const v1::Problem& problem) {
  v1::Problem out = problem;
  if (!SpansGpus(problem)) return out;
  for (v1::TensorSpec& t : *out.mutable_tensors()) {
    if (t.placement() == v1::PLACEMENT_PER_RANK) {
      t.mutable_shape()->Add(absl::StrCat(problem.world_size()));
      std::rotate(t.mutable_shape()->rbegin(), t.mutable_shape()->rbegin() + 1,
                  t.mutable_shape()->rend());
    }
    t.clear_placement();
  }
  out.clear_world_size();
  return out;
}

bool IsDim(const v1::Problem& problem, const std::string& name) {
  for (const v1::DimSpec& dim : problem.dims()) {
    if (dim.name() == name) return true;
  }
  return false;
}

absl::StatusOr<double> ProblemFlops(const v1::Problem& problem,
                                    const DimValues& dims) {
  ASSIGN_OR_RETURN(int64_t flops, EvalExpr(problem.flops(), dims));
  return static_cast<double>(flops);
}

absl::StatusOr<double> ProblemMinBytes(const v1::Problem& problem,
                                       const DimValues& dims) {
  if (!problem.min_bytes().empty()) {
    ASSIGN_OR_RETURN(int64_t bytes, EvalExpr(problem.min_bytes(), dims));
    return static_cast<double>(bytes);
  }
  double bytes = 0;
  for (const v1::TensorSpec& tensor : problem.tensors()) {
    ASSIGN_OR_RETURN(int64_t elements, TensorElements(tensor, dims));
    bytes += static_cast<double>(elements) * DTypeSize(tensor.dtype());
  }
  return bytes;
}

std::string EntryPrototype(const v1::Problem& problem,
                           const std::string& entry_name) {
  std::vector<std::string> params;
  for (const std::string& name : problem.signature()) {
    const v1::TensorSpec* tensor = FindTensor(problem, name);
    if (tensor == nullptr) {
      params.push_back(absl::StrCat("int ", name));
    } else if (tensor->role() == v1::TENSOR_ROLE_INPUT) {
      params.push_back(
          absl::StrCat("const ", DTypeCName(tensor->dtype()), "* ", name));
    } else {
      params.push_back(absl::StrCat(DTypeCName(tensor->dtype()), "* ", name));
    }
  }
  return absl::StrCat("extern \"C\" __global__ void ", entry_name, "(",
                      absl::StrJoin(params, ", "), ")");
}

std::string FormatDims(const v1::Problem& problem, const DimValues& dims) {
  std::vector<std::string> parts;
  for (const v1::DimSpec& dim : problem.dims()) {
    auto it = dims.find(dim.name());
    if (it != dims.end()) {
      parts.push_back(absl::StrCat(it->first, "=", it->second));
    }
  }
  for (const auto& [name, value] : dims) {
    if (!IsDim(problem, name)) parts.push_back(absl::StrCat(name, "=", value));
  }
  return absl::StrJoin(parts, " ");
}

std::string ToleranceText(const v1::Tolerance& tol) {
  std::string text = absl::StrFormat(
      "|out - ref| <= %g + %g * |ref| per element, rel-norm <= %g", tol.atol(),
      tol.rtol(), tol.max_rel_norm());
  if (tol.norm_floor() > 0) {
    absl::StrAppend(&text, absl::StrFormat(" (||ref|| floored at %g * sqrt(n))",
                                           tol.norm_floor()));
  }
  return text;
}

std::vector<ProblemSource> ProblemSources(const v1::Problem& problem) {
  const ProblemSource all[] = {
      {ProblemSource::kExample, "example kernel", &problem.example_kernel(),
       &problem.example_source()},
      {ProblemSource::kGolden, "golden kernel", &problem.golden().file(),
       &problem.golden().source()},
      {ProblemSource::kBaseline, "baseline kernel", &problem.baseline().file(),
       &problem.baseline().source()},
      {ProblemSource::kExpert, "expert baseline kernel",
       &problem.expert().file(), &problem.expert().source()}};
  std::vector<ProblemSource> out;
  for (const ProblemSource& s : all) {
    if (!s.source->empty()) out.push_back(s);
  }
  return out;
}

v1::Problem PublicView(const v1::Problem& problem) {
  v1::Problem view = problem;
  view.clear_shape_sets();
  std::set<std::string> hidden;
  for (const v1::ShapeSet& set : problem.shape_sets()) {
    if (set.hidden()) {
      hidden.insert(set.name());
    } else {
      *view.add_shape_sets() = set;
    }
  }
  view.clear_check_shape_sets();
  for (const std::string& name : problem.check_shape_sets()) {
    if (hidden.count(name) == 0) view.add_check_shape_sets(name);
  }
  // The golden's file name says it has one; its source is the runner's.
  // So is the baseline's (its steps and name say what it runs).
  view.mutable_golden()->clear_source();
  if (view.golden().file().empty()) view.clear_golden();
  view.mutable_baseline()->clear_source();
  if (!problem.has_baseline()) view.clear_baseline();
  view.mutable_expert()->clear_source();
  if (!problem.has_expert()) view.clear_expert();
  return view;
}

}  // namespace kbench
