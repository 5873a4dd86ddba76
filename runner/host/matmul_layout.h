// MatmulLayout: a baseline's matmul step, stated in row-major terms as
// PyTorch states it (d[M, N] = op(a)[M, K] . op(b)[K, N], problem.proto's
// MatmulStep), turned into the column-major call cuBLASLt takes. A
// row-major matrix is the column-major transpose over the same memory, so
//   d^T (N x M) = op(b)^T (N x K) . op(a)^T (K x M):
// cuBLASLt's A is the step's b, its B the step's a, m' = N, n' = M, and a
// bias epilogue's vector (m' long) is the step's bias[N].
//
// Pure arithmetic, no CUDA: unit-tested without a GPU.
// Thread safety: value types and a pure function.
#ifndef KBENCH_RUNNER_HOST_MATMUL_LAYOUT_H_
#define KBENCH_RUNNER_HOST_MATMUL_LAYOUT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "contract/expr.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {

// One column-major operand as cuBLASLt's matrix layout takes it.
struct LtOperand {
  std::string name;  // The tensor or workspace it reads or writes.
  bool transpose = false;
  int64_t rows = 0;  // Of the stored matrix (column-major).
  int64_t cols = 0;
  int64_t ld = 0;
  int64_t batch_stride = 0;  // Elements; 0 with one matrix.
};

struct MatmulLayout {
  int64_t m = 0, n = 0, k = 0;  // cuBLASLt's (m' = N, n' = M).
  int64_t batch = 1;
  LtOperand a, b, d;  // cuBLASLt's A (the step's b), B (the step's a), D.
  std::string bias;   // Empty for none; m' elements.
  double alpha = 1;
};

// Evaluates `step`'s expressions at `dims` and lays it out for cuBLASLt.
// InvalidArgument for an expression that does not evaluate, an extent
// below 1, or a batch without strides.
absl::StatusOr<MatmulLayout> LayOutMatmul(const v1::MatmulStep& step,
                                          const DimValues& dims);

// Elements each operand spans at `layout` (the last matrix's end): what
// the buffer it names must hold.
int64_t SpanElements(const LtOperand& operand, int64_t batch);

}  // namespace kbench

#endif  // KBENCH_RUNNER_HOST_MATMUL_LAYOUT_H_
