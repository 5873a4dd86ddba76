#include "contract/problem_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/problem_util.h"
#include "contract/problem_util_internal.h"

namespace kbench {

using internal::FieldError;

namespace {

// `text` parses and uses only the problem's dims.
absl::Status CheckExpr(const v1::Problem& p, absl::string_view field,
                       absl::string_view text) {
  absl::StatusOr<Expr> expr = Expr::Parse(text);
  if (!expr.ok()) return FieldError(p, field, expr.status().message());
  for (const std::string& name : expr->Names()) {
    if (!IsDim(p, name)) {
      return FieldError(p, field,
                        absl::StrCat("'", text, "' uses '", name,
                                     "', which is not a dim of the problem"));
    }
  }
  return absl::OkStatus();
}

bool IsFloat(v1::DType d) {
  return d == v1::DTYPE_FP32 || d == v1::DTYPE_BF16 || d == v1::DTYPE_FP16 ||
         d == v1::DTYPE_FP64;
}

// Every public shape's dims (for checks that need values).
std::vector<DimValues> PublicDims(const v1::Problem& p) {
  std::vector<DimValues> all;
  for (const v1::ShapeSet& set : p.shape_sets()) {
    if (set.hidden()) continue;
    for (const v1::Shape& shape : set.shapes()) {
      absl::StatusOr<DimValues> dims = ShapeDims(p, shape);
      if (dims.ok()) all.push_back(*dims);
    }
  }
  return all;
}

absl::Status CheckInputs(const v1::Problem& p) {
  for (int i = 0; i < p.tensors_size(); ++i) {
    const v1::TensorSpec& t = p.tensors(i);
    const std::string field = absl::StrCat("tensors[", i, "] (", t.name(), ")");
    const v1::InputDistribution& in = t.input();
    const bool is_int = t.dtype() == v1::DTYPE_INT32;
    if (t.role() == v1::TENSOR_ROLE_OUTPUT) {
      if (t.has_input()) {
        return FieldError(p, field, "input: an output's values are not drawn");
      }
      if (is_int) {
        return FieldError(p, field,
                          "an output is floating point (int32 tensors are "
                          "inputs, such as indices)");
      }
      continue;
    }
    switch (in.kind()) {
      case v1::InputDistribution::KIND_DEFAULT:
        if (is_int) {
          return FieldError(p, field,
                            "an int32 input needs input { kind: KIND_INTEGERS "
                            "int_low: ... int_high: ... }");
        }
        break;
      case v1::InputDistribution::KIND_UNIFORM:
        if (!IsFloat(t.dtype())) {
          return FieldError(p, field,
                            "KIND_UNIFORM draws floating-point values");
        }
        if (!std::isfinite(in.low()) || !std::isfinite(in.high()) ||
            !(in.low() < in.high()) || std::fabs(in.low()) > 1e6 ||
            std::fabs(in.high()) > 1e6) {
          return FieldError(
              p, field,
              absl::StrCat("input: low ", in.low(), " and high ", in.high(),
                           " must be finite, low < high, within "
                           "[-1e6, 1e6]"));
        }
        break;
      case v1::InputDistribution::KIND_INTEGERS: {
        if (!is_int) {
          return FieldError(p, field, "KIND_INTEGERS draws int32 values");
        }
        RETURN_IF_ERROR(
            CheckExpr(p, absl::StrCat(field, ".input.int_low"), in.int_low()));
        RETURN_IF_ERROR(CheckExpr(p, absl::StrCat(field, ".input.int_high"),
                                  in.int_high()));
        for (const DimValues& dims : PublicDims(p)) {
          absl::StatusOr<int64_t> lo = EvalExpr(in.int_low(), dims);
          absl::StatusOr<int64_t> hi = EvalExpr(in.int_high(), dims);
          if (!lo.ok() || !hi.ok() || *lo >= *hi ||
              *lo < std::numeric_limits<int32_t>::min() ||
              *hi - 1 > std::numeric_limits<int32_t>::max()) {
            return FieldError(
                p, field,
                "input: int_low < int_high must hold, within int32, "
                "at every public shape");
          }
        }
        break;
      }
      default:
        return FieldError(p, field, "input: unknown kind");
    }
  }
  return absl::OkStatus();
}

// `b` is the problem's baseline or its expert baseline, `what` its field
// ("baseline", "expert").
// An NCCL step: only where the problem spans GPUs, from a per-rank input to
// a workspace (ValidateBaselineSteps checks the file declares it).
absl::Status CheckNcclStep(const v1::Problem& p, const v1::NcclStep& nccl,
                           const std::string& field) {
  if (p.world_size() <= 1) {
    return FieldError(
        p, field,
        "an nccl step needs a problem that spans GPUs (world_size "
        "2 or more)");
  }
  if (nccl.op_case() != v1::NcclStep::kAllGather) {
    return FieldError(p, field, "nccl needs an op: all_gather { send recv }");
  }
  const v1::NcclStep::AllGather& ag = nccl.all_gather();
  const v1::TensorSpec* send = FindTensor(p, ag.send());
  if (send == nullptr || send->role() != v1::TENSOR_ROLE_INPUT ||
      send->placement() != v1::PLACEMENT_PER_RANK) {
    return FieldError(
        p, field,
        absl::StrCat("nccl.all_gather.send '", ag.send(),
                     "' is not an input with PLACEMENT_PER_RANK"));
  }
  if (!IsIdentifier(ag.recv()) || FindTensor(p, ag.recv()) != nullptr ||
      IsDim(p, ag.recv())) {
    return FieldError(p, field,
                      absl::StrCat("nccl.all_gather.recv '", ag.recv(),
                                   "' must name a workspace of the baseline's "
                                   "file, not a tensor or dim of the problem"));
  }
  return absl::OkStatus();
}

absl::Status CheckStepShapes(const v1::Problem& p, const v1::Baseline& b,
                             absl::string_view what) {
  const bool expert = what != "baseline";
  if (b.steps().empty()) {
    return FieldError(p, what,
                      expert
                          ? "an expert baseline needs at least one step: what "
                            "an expert runs, timed beside the baseline"
                          : "a golden-kernel problem needs a baseline with at "
                            "least one step: what PyTorch eager runs, timed "
                            "against the candidate");
  }
  // Reports print the name on a line of its own: a newline in it could
  // forge the lines after it (review, 2026-12-05).
  if (b.name().empty() || b.name().size() > 200 ||
      std::any_of(b.name().begin(), b.name().end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      })) {
    return FieldError(p, absl::StrCat(what, ".name"),
                      "one line of at most 200 characters, without control "
                      "characters, saying what it stands for");
  }
  if (b.steps_size() > kMaxBaselineSteps) {
    return FieldError(p, absl::StrCat(what, ".steps"),
                      absl::StrCat("more than ", kMaxBaselineSteps));
  }
  for (int i = 0; i < b.steps_size(); ++i) {
    const v1::BaselineStep& step = b.steps(i);
    const std::string field = absl::StrCat(what, ".steps[", i, "]");
    if (step.step_case() == v1::BaselineStep::kLaunch) {
      if (!IsIdentifier(step.launch())) {
        return FieldError(p, field, "launch names no kernel");
      }
      if (b.file().empty()) {
        return FieldError(p, field,
                          absl::StrCat("a launch step needs the ",
                                       expert ? "expert baseline" : "baseline",
                                       "'s file (", what,
                                       ".file: its kernels and `// @kb launch` "
                                       "lines)"));
      }
      continue;
    }
    if (step.step_case() == v1::BaselineStep::kNccl) {
      RETURN_IF_ERROR(CheckNcclStep(p, step.nccl(), field));
      continue;
    }
    if (step.step_case() != v1::BaselineStep::kMatmul) {
      return FieldError(p, field,
                        "a step is a launch, a matmul or an nccl step");
    }
    const v1::MatmulStep& m = step.matmul();
    for (const auto& [name, value] :
         {std::pair<const char*, const std::string&>{"a", m.a()},
          {"b", m.b()},
          {"d", m.d()}}) {
      if (!IsIdentifier(value)) {
        return FieldError(
            p, field,
            absl::StrCat("matmul.", name, " names no tensor or workspace"));
      }
    }
    if (!m.bias().empty() && !IsIdentifier(m.bias())) {
      return FieldError(p, field, "matmul.bias is not a name");
    }
    for (const auto& [name, value] :
         {std::pair<const char*, const std::string&>{"m", m.m()},
          {"n", m.n()},
          {"k", m.k()}}) {
      RETURN_IF_ERROR(
          CheckExpr(p, absl::StrCat(field, ".matmul.", name), value));
    }
    if (!m.batch().empty()) {
      RETURN_IF_ERROR(CheckExpr(p, field + ".matmul.batch", m.batch()));
      for (const auto& [name, value] :
           {std::pair<const char*, const std::string&>{"stride_a",
                                                       m.stride_a()},
            {"stride_b", m.stride_b()},
            {"stride_d", m.stride_d()}}) {
        if (value.empty()) {
          return FieldError(
              p, field, absl::StrCat("a batched matmul needs matmul.", name));
        }
        RETURN_IF_ERROR(
            CheckExpr(p, absl::StrCat(field, ".matmul.", name), value));
      }
    }
    if (!v1::MatmulStep::Activation_IsValid(m.activation())) {
      return FieldError(p, field, "matmul.activation is unknown");
    }
    if (m.dtype() != v1::DTYPE_UNSPECIFIED && m.dtype() != v1::DTYPE_FP32 &&
        m.dtype() != v1::DTYPE_BF16 && m.dtype() != v1::DTYPE_FP16) {
      return FieldError(p, field, "matmul.dtype is fp32, bf16 or fp16");
    }
    if (!std::isfinite(m.alpha())) {
      return FieldError(p, field, "matmul.alpha is not finite");
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool ExactIn(v1::DType dtype, double value) {
  switch (dtype) {
    case v1::DTYPE_FP64:
      return true;
    case v1::DTYPE_INT32:
      return value == std::floor(value) &&
             value >= std::numeric_limits<int32_t>::min() &&
             value <= std::numeric_limits<int32_t>::max();
    case v1::DTYPE_FP32:
      return static_cast<double>(static_cast<float>(value)) == value;
    case v1::DTYPE_BF16: {
      const float f = static_cast<float>(value);
      if (static_cast<double>(f) != value) return false;
      uint32_t bits = 0;
      std::memcpy(&bits, &f, sizeof(bits));
      return (bits & 0xFFFFu) == 0;  // bf16 is fp32's upper half.
    }
    case v1::DTYPE_FP16: {
      if (value == 0) return true;
      const double a = std::fabs(value);
      if (a > 65504 || a < 6.103515625e-05) return false;  // Normals only.
      int exp = 0;
      const double mantissa = std::frexp(a, &exp);  // In [0.5, 1).
      const double scaled = std::ldexp(mantissa, 11);
      return scaled == std::floor(scaled);
    }
    default:
      return false;
  }
}

absl::StatusOr<v1::DType> MatmulDType(const v1::Problem& problem,
                                      const v1::MatmulStep& step) {
  v1::DType type = v1::DTYPE_UNSPECIFIED;
  for (const std::string* name :
       {&step.a(), &step.b(), &step.d(), &step.bias()}) {
    const v1::TensorSpec* t = FindTensor(problem, *name);
    if (t == nullptr) continue;
    if (type != v1::DTYPE_UNSPECIFIED && t->dtype() != type) {
      return absl::InvalidArgumentError(
          "the matmul's tensors differ in dtype; its operands share one");
    }
    type = t->dtype();
  }
  if (type == v1::DTYPE_UNSPECIFIED) type = step.dtype();
  if (type != v1::DTYPE_FP32 && type != v1::DTYPE_BF16 &&
      type != v1::DTYPE_FP16) {
    return absl::InvalidArgumentError(
        "the matmul computes in fp32, bf16 or fp16: its tensors' dtype, or "
        "matmul.dtype when every operand is a workspace");
  }
  if (step.dtype() != v1::DTYPE_UNSPECIFIED && step.dtype() != type) {
    return absl::InvalidArgumentError(
        "matmul.dtype differs from its tensors' dtype");
  }
  return type;
}

absl::Status ValidateProblemData(const v1::Problem& p) {
  if (!p.min_bytes().empty()) {
    RETURN_IF_ERROR(CheckExpr(p, "min_bytes", p.min_bytes()));
  }
  RETURN_IF_ERROR(CheckInputs(p));
  RETURN_IF_ERROR(CheckStepShapes(p, p.baseline(), "baseline"));
  if (p.has_expert()) {
    RETURN_IF_ERROR(CheckStepShapes(p, p.expert(), "expert"));
  }
  if (p.check_cases().empty()) {
    return FieldError(p, "check_cases",
                      "a golden-kernel problem needs at least one check case: "
                      "inputs and outputs computed off-line in fp64, which the "
                      "golden must reproduce");
  }
  return ValidateCheckCases(p);
}

absl::Status ValidateBaselineSteps(const v1::Problem& p,
                                   const v1::LaunchPlan* file_plan) {
  return ValidateBaselineSteps(p, p.baseline(), "baseline", file_plan);
}

absl::Status ValidateBaselineSteps(const v1::Problem& p, const v1::Baseline& b,
                                   absl::string_view what,
                                   const v1::LaunchPlan* file_plan) {
  std::set<std::string> workspaces;
  if (file_plan != nullptr) {
    for (const v1::WorkspaceSpec& w : file_plan->workspaces()) {
      workspaces.insert(w.name());
    }
  }
  int next_launch = 0;
  const int launches = file_plan ? file_plan->launches_size() : 0;
  for (int i = 0; i < b.steps_size(); ++i) {
    const v1::BaselineStep& step = b.steps(i);
    const std::string field = absl::StrCat(what, ".steps[", i, "]");
    if (step.step_case() == v1::BaselineStep::kNccl) {
      const std::string& recv = step.nccl().all_gather().recv();
      if (workspaces.count(recv) == 0) {
        return FieldError(
            p, field,
            absl::StrCat("nccl.all_gather.recv '", recv,
                         "' is not a `// @kb workspace` of the "
                         "file; declare it there, world_size times "
                         "the shard's size"));
      }
      continue;
    }
    if (step.step_case() == v1::BaselineStep::kLaunch) {
      if (next_launch >= launches ||
          file_plan->launches(next_launch).entry() != step.launch()) {
        return FieldError(
            p, field,
            absl::StrCat(
                "launch '", step.launch(),
                "' is not the file's next `// @kb launch` line (",
                next_launch < launches
                    ? absl::StrCat("that launches '",
                                   file_plan->launches(next_launch).entry(),
                                   "'")
                    : std::string("there is none left"),
                "): the steps take the file's launches in order"));
      }
      ++next_launch;
      continue;
    }
    const v1::MatmulStep& m = step.matmul();
    for (const std::string* name : {&m.a(), &m.b(), &m.d(), &m.bias()}) {
      if (name->empty()) continue;
      const v1::TensorSpec* t = FindTensor(p, *name);
      if (t == nullptr && workspaces.count(*name) == 0) {
        return FieldError(
            p, field,
            absl::StrCat("'", *name,
                         "' is neither a tensor of the problem nor a "
                         "workspace of the ",
                         what, "'s file"));
      }
      if (name == &m.d() && t != nullptr &&
          t->role() == v1::TENSOR_ROLE_INPUT) {
        return FieldError(p, field,
                          absl::StrCat("matmul.d '", *name,
                                       "' is an input: a baseline never writes "
                                       "its inputs"));
      }
    }
    absl::StatusOr<v1::DType> type = MatmulDType(p, m);
    if (!type.ok()) return FieldError(p, field, type.status().message());
  }
  if (next_launch != launches) {
    return FieldError(
        p, absl::StrCat(what, ".steps"),
        absl::StrCat("the file's launch ", next_launch + 1, " ('",
                     file_plan->launches(next_launch).entry(), "', line ",
                     file_plan->launches(next_launch).line(),
                     ") is run by no step"));
  }
  return absl::OkStatus();
}

}  // namespace kbench
