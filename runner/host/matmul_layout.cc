#include "runner/host/matmul_layout.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace kbench {
namespace {

// `text` at `dims`, >= `min` (an empty text is `fallback`).
absl::StatusOr<int64_t> Extent(const std::string& text, const char* field,
                               const DimValues& dims, int64_t min,
                               int64_t fallback) {
  if (text.empty()) return fallback;
  absl::StatusOr<int64_t> v = EvalExpr(text, dims);
  if (!v.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul ", field, " '", text, "': ", v.status().message()));
  }
  if (*v < min) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul ", field, " '", text, "' is ", *v, ", below ", min));
  }
  return *v;
}

}  // namespace

absl::StatusOr<MatmulLayout> LayOutMatmul(const v1::MatmulStep& step,
                                          const DimValues& dims) {
  MatmulLayout l;
  ASSIGN_OR_RETURN(const int64_t M, Extent(step.m(), "m", dims, 1, 0));
  ASSIGN_OR_RETURN(const int64_t N, Extent(step.n(), "n", dims, 1, 0));
  ASSIGN_OR_RETURN(const int64_t K, Extent(step.k(), "k", dims, 1, 0));
  ASSIGN_OR_RETURN(l.batch, Extent(step.batch(), "batch", dims, 1, 1));
  int64_t stride_a = 0, stride_b = 0, stride_d = 0;
  if (l.batch > 1) {
    if (step.stride_a().empty() || step.stride_b().empty() ||
        step.stride_d().empty()) {
      return absl::InvalidArgumentError(
          "a batched matmul needs stride_a, stride_b and stride_d");
    }
    ASSIGN_OR_RETURN(stride_a, Extent(step.stride_a(), "stride_a", dims, 0, 0));
    ASSIGN_OR_RETURN(stride_b, Extent(step.stride_b(), "stride_b", dims, 0, 0));
    ASSIGN_OR_RETURN(stride_d, Extent(step.stride_d(), "stride_d", dims, 1, 0));
  }
  l.m = N;
  l.n = M;
  l.k = K;
  // cuBLASLt's A is the step's b: row-major [K, N] is column-major N x K
  // (as op(A) must be); stored [N, K] (trans_b) it is K x N, transposed.
  l.a = {step.b(),
         step.trans_b(),
         step.trans_b() ? K : N,
         step.trans_b() ? N : K,
         step.trans_b() ? K : N,
         stride_b};
  // cuBLASLt's B is the step's a: row-major [M, K] is column-major K x M;
  // stored [K, M] (trans_a) it is M x K, transposed.
  l.b = {step.a(),
         step.trans_a(),
         step.trans_a() ? M : K,
         step.trans_a() ? K : M,
         step.trans_a() ? M : K,
         stride_a};
  l.d = {step.d(), false, N, M, N, stride_d};
  l.bias = step.bias();
  l.alpha = step.alpha() == 0 ? 1.0 : step.alpha();
  return l;
}

int64_t SpanElements(const LtOperand& operand, int64_t batch) {
  const int64_t one = operand.ld * (operand.cols - 1) + operand.rows;
  return one + (batch > 1 ? (batch - 1) * operand.batch_stride : 0);
}

}  // namespace kbench
