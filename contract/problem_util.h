// Helpers over kbench.v1.Problem: validation of a problem file, dims of a
// shape, tensor sizes, FLOPs and the C prototype of the entry point.
//
// Thread safety: free functions on values; safe to call concurrently.
#ifndef KBENCH_CONTRACT_PROBLEM_UTIL_H_
#define KBENCH_CONTRACT_PROBLEM_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "contract/expr.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {

// Bytes per element: FP32 4, BF16 2, FP16 2, FP64 8; 0 for unspecified.
int DTypeSize(v1::DType dtype);
// "float", "__nv_bfloat16", "__half", "double".
std::string DTypeCName(v1::DType dtype);
// "fp32", "bf16", "fp16", "fp64".
std::string DTypeShortName(v1::DType dtype);

// Full check of a problem as loaded from a file: unique non-empty names;
// dims with 1 <= min <= max; tensor shapes parse and use only dims; the
// signature names every tensor and dim exactly once, inputs before they are
// used is not required; every shape of every set gives every dim a value in
// its domain (min, max, multiple_of) and names no unknown dim; the default
// and check shape sets exist; tolerance fields are positive; flops parses;
// the reference is a golden kernel with a baseline and check cases
// (ValidateProblemData). Errors are InvalidArgument naming the problem and
// the field.
absl::Status ValidateProblem(const v1::Problem& problem);

// The dims of `shape` (validated against the problem's domain).
absl::StatusOr<DimValues> ShapeDims(const v1::Problem& problem,
                                    const v1::Shape& shape);

// Checks one dims assignment against the problem's domain.
absl::Status CheckDimsInDomain(const v1::Problem& problem,
                               const DimValues& dims);

// The most bytes one tensor may hold (1 TiB: above any GPU's memory, far
// below where elements * size would wrap).
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;

// The most GPUs a problem may span (Problem.world_size): the GPUs of one
// host that kbd can lease together as a gang (docs/multi-gpu.md).
inline constexpr int kMaxWorldSize = 8;

// The names a launch plan of a problem that spans GPUs may use beside its
// dims: each rank's index (0-based) and the number of ranks. Reserved in
// every problem (problem_validate.cc).
inline constexpr char kRankDim[] = "rank";
inline constexpr char kWorldSizeDim[] = "world_size";

// True when the problem runs on several GPUs at once (world_size >= 2).
bool SpansGpus(const v1::Problem& problem);

// True when a launch plan may pass `name` as an int: a dim, or `rank` and
// `world_size` in a problem that spans GPUs.
bool IsLaunchDim(const v1::Problem& problem, const std::string& name);

// The dims a rank's launch plan is resolved at: `dims` with `rank` and
// `world_size` added. kbd resolves a plan at every rank of every checked
// shape; the runner, each rank's at its own.
DimValues RankDims(const DimValues& dims, int rank, int world_size);

// The one-GPU view of a problem that spans GPUs, which its golden kernel
// and its check cases see: every per-rank tensor gains a leading extent
// of world_size (the shards in rank order); placements and world_size are
// cleared. A one-GPU problem comes back unchanged.
v1::Problem GatheredProblem(const v1::Problem& problem);

// Number of elements of a tensor at `dims`; InvalidArgument when they
// overflow or would take more than kMaxTensorBytes.
absl::StatusOr<int64_t> TensorElements(const v1::TensorSpec& tensor,
                                       const DimValues& dims);

// Whether a problem can be run at `dims`: every tensor's size
// (TensorElements) and its `flops` and `min_bytes` formulas evaluate, the
// formulas to at least 0. Checked at load for every public shape and for
// every drawn hidden case, so that no timed job fails on them after its
// kernel ran.
absl::Status CheckShapeFigures(const v1::Problem& problem,
                               const DimValues& dims);

// Evaluated extents of a tensor at `dims`.
absl::StatusOr<std::vector<int64_t>> TensorExtents(const v1::TensorSpec& tensor,
                                                   const DimValues& dims);

// The tensor or nullptr.
const v1::TensorSpec* FindTensor(const v1::Problem& problem,
                                 const std::string& name);
// The shape set or nullptr.
const v1::ShapeSet* FindShapeSet(const v1::Problem& problem,
                                 const std::string& name);
// True when `name` is one of the problem's dims.
bool IsDim(const v1::Problem& problem, const std::string& name);

// Useful FLOPs at `dims` (the problem's flops expression).
absl::StatusOr<double> ProblemFlops(const v1::Problem& problem,
                                    const DimValues& dims);
// Fewest bytes any kernel must move: every input read once and every
// output written once.
absl::StatusOr<double> ProblemMinBytes(const v1::Problem& problem,
                                       const DimValues& dims);

// One kernel file a problem names, read by the registry: its example (shown
// to clients) or one of its trusted files (golden, baseline, expert).
struct ProblemSource {
  enum Kind { kExample, kGolden, kBaseline, kExpert };
  Kind kind;
  const char* what;  // In messages: "golden kernel", "expert baseline kernel".
  const std::string* file;    // As the problem names it.
  const std::string* source;  // Its text (filled in by the registry).
};
// Every source of `problem` that has text, in the order example, golden,
// baseline, expert; the pointers are into `problem`.
std::vector<ProblemSource> ProblemSources(const v1::Problem& problem);

// The entry point's C prototype, e.g.
// extern "C" __global__ void gather_linear(const float* x, const float* w,
//     const float* bias, float* out, int R, int B, int H, int K)
std::string EntryPrototype(const v1::Problem& problem,
                           const std::string& entry_name);

// "R=4 B=12 H=32 K=56", in the problem's dim order.
std::string FormatDims(const v1::Problem& problem, const DimValues& dims);

// "|out - ref| <= 0.001 + 0.001 * |ref| per element, rel-norm <= 1e-05",
// with the norm floor when the problem sets one.
std::string ToleranceText(const v1::Tolerance& tol);

// A copy of the problem without hidden shape sets (for callers).
v1::Problem PublicView(const v1::Problem& problem);

}  // namespace kbench

#endif  // KBENCH_CONTRACT_PROBLEM_UTIL_H_
